import type { StatisticNode } from '../stat/statistic-node';
import { BLOCKED, PASS, type TrafficController } from './traffic-controller';

/**
 * `reject`: a call passes while the counted value + acquireCount <= threshold, where the
 * counted value is the passes in the second-level window (QPS) or the calls in flight
 * (concurrency). Sentinel's DefaultController, without priority occupation.
 */
export class DefaultController implements TrafficController {
  constructor(
    private readonly threshold: number,
    private readonly concurrency: boolean,
  ) {}

  tryPass(node: StatisticNode, acquireCount: number, now: number): number {
    const current = this.concurrency ? node.concurrency : node.passQps(now);
    return current + acquireCount <= this.threshold ? PASS : BLOCKED;
  }

  retryAfterMs(node: StatisticNode, _acquireCount: number, now: number): number | undefined {
    return this.concurrency ? undefined : node.msUntilPassesDrop(now);
  }
}
