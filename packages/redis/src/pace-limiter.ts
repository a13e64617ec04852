import type { ClusterDecision, ClusterLimiter, ClusterPaceSpec } from '@floodgate/core';
import { replyNumber, type LimiterContext } from './limiter-context';
import { PACE_SCRIPT } from './scripts/pace-script';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });
const BLOCK: ClusterDecision = Object.freeze({ status: 'block', retryAfterMs: undefined });

/**
 * A `throttle` rule in the store: every instance paces its calls on one shared latest-passed
 * time, so the cluster as a whole admits one call per `durationMs * acquireCount / threshold`
 * ms, queueing calls up to `maxQueueingTimeMs`. Pacing cannot be leased.
 */
export class PaceLimiter implements ClusterLimiter {
  private readonly baseKey: string;
  private readonly maxQueueArg: string;

  constructor(
    private readonly spec: ClusterPaceSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = `${ctx.prefix}:p:${spec.key}`;
    this.maxQueueArg = String(spec.maxQueueingTimeMs);
  }

  acquire(acquireCount: number, scope: string, thresholdOverride?: number): Promise<ClusterDecision> {
    if (acquireCount <= 0) return Promise.resolve(PASS);
    const threshold = this.ctx.effectiveThreshold(thresholdOverride ?? this.spec.threshold, this.spec.thresholdType);
    if (threshold <= 0) return Promise.resolve(BLOCK);
    const costMs = (this.spec.durationMs * acquireCount) / threshold;
    const ttlMs = Math.ceil(costMs + this.spec.maxQueueingTimeMs) + 1000;
    const key = scope === '' ? this.baseKey : `${this.baseKey}:${scope}`;
    const args = [this.ctx.sharedNow(), String(costMs), this.maxQueueArg, String(ttlMs)];
    return this.ctx.gate.run(PACE_SCRIPT, key, args, (reply, recoveredAfterMs) => {
      const status = replyNumber(reply, 0);
      const ms = replyNumber(reply, 1);
      const extra = recoveredAfterMs === undefined ? undefined : { recoveredAfterMs };
      if (status === 1) return extra === undefined ? PASS : { status: 'pass', ...extra };
      if (status === 2) return { status: 'wait', waitMs: ms, ...extra };
      return { status: 'block', retryAfterMs: ms, ...extra };
    });
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }
}
