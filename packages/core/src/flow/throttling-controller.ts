import type { StatisticNode } from '../stat/statistic-node';
import { Pacer } from './pacer';
import { BLOCKED, PASS, type TrafficController } from './traffic-controller';

/**
 * `throttle`: calls are spaced `1000 * acquireCount / threshold` ms apart (fractional, so
 * thresholds above 1000/s still pace); a call that would wait longer than `maxQueueingTimeMs`
 * is blocked. Sentinel's ThrottlingController (RateLimiterController).
 */
export class ThrottlingController implements TrafficController {
  private readonly pacer = new Pacer();

  constructor(
    private readonly threshold: number,
    private readonly maxQueueingTimeMs: number,
  ) {}

  tryPass(_node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number {
    if (acquireCount <= 0) return PASS;
    if (this.threshold <= 0) return BLOCKED;
    return this.pacer.take(this.costMs(acquireCount), now, this.maxQueueingTimeMs, canWait);
  }

  retryAfterMs(_node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number | undefined {
    if (this.threshold <= 0) return undefined;
    const wait = this.pacer.waitMs(this.costMs(acquireCount), now);
    return canWait ? Math.max(0, wait - this.maxQueueingTimeMs) : wait;
  }

  refund(slotAt: number): void {
    this.pacer.refund(slotAt);
  }

  private costMs(acquireCount: number): number {
    return (1000 * acquireCount) / this.threshold;
  }
}
