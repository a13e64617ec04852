import type { StatisticNode } from '../stat/statistic-node';
import { Pacer } from './pacer';
import { BLOCKED, PASS, type TrafficController } from './traffic-controller';
import { WarmUpTokens } from './warm-up-tokens';

/**
 * `warmUpThrottle`: even pacing (as `throttle`) at the warm-up rate (as `warmUp`): each call
 * costs `1000 * acquireCount / rate` ms. Sentinel's WarmUpRateLimiterController.
 */
export class WarmUpThrottlingController implements TrafficController {
  /** The warm-up token bucket (exposed for tests and metrics). */
  readonly tokens: WarmUpTokens;
  private readonly pacer = new Pacer();
  private lastCostMs = 0;

  constructor(
    private readonly threshold: number,
    warmUpPeriodMs: number,
    coldFactor: number,
    private readonly maxQueueingTimeMs: number,
  ) {
    this.tokens = new WarmUpTokens(threshold, warmUpPeriodMs, coldFactor);
  }

  tryPass(node: StatisticNode, acquireCount: number, now: number, canWait: boolean): number {
    if (acquireCount <= 0) return PASS;
    if (this.threshold <= 0) return BLOCKED;
    const rate = this.tokens.rate(node.previousPassQps(now), now);
    this.lastCostMs = (1000 * acquireCount) / rate;
    return this.pacer.take(this.lastCostMs, now, this.maxQueueingTimeMs, canWait);
  }

  retryAfterMs(_node: StatisticNode, _acquireCount: number, now: number, canWait: boolean): number | undefined {
    if (this.threshold <= 0) return undefined;
    const wait = this.pacer.waitMs(this.lastCostMs, now);
    return canWait ? Math.max(0, wait - this.maxQueueingTimeMs) : wait;
  }

  refund(slotAt: number): void {
    this.pacer.refund(slotAt);
  }
}
