import type { StatisticNode } from '../stat/statistic-node';
import { BLOCKED, PASS, type TrafficController } from './traffic-controller';
import { WarmUpTokens } from './warm-up-tokens';

/**
 * `warmUp`: the admitted rate climbs from about `threshold / coldFactor` to `threshold` over
 * `warmUpPeriodMs` of steady traffic, and falls back as the system cools. A call passes while
 * the window's passes + acquireCount <= the current rate. Sentinel's WarmUpController.
 */
export class WarmUpController implements TrafficController {
  /** The warm-up token bucket (exposed for tests and metrics). */
  readonly tokens: WarmUpTokens;

  constructor(threshold: number, warmUpPeriodMs: number, coldFactor: number) {
    this.tokens = new WarmUpTokens(threshold, warmUpPeriodMs, coldFactor);
  }

  tryPass(node: StatisticNode, acquireCount: number, now: number): number {
    const rate = this.tokens.rate(node.previousPassQps(now), now);
    return node.passQps(now) + acquireCount <= rate ? PASS : BLOCKED;
  }

  retryAfterMs(node: StatisticNode, _acquireCount: number, now: number): number | undefined {
    return node.msUntilPassesDrop(now);
  }
}
