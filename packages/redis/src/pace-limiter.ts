import type { ClusterDecision, ClusterLimiter, ClusterPaceSpec } from '@floodgate/core/cluster';
import type { LimiterContext } from './limiter-context';
import { replyNumber } from './reply-number';
import { PACE_SCRIPT } from './scripts/pace-script';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });
const BLOCK: ClusterDecision = Object.freeze({ status: 'block', retryAfterMs: undefined });

/**
 * A `throttle` rule in the store: every instance paces its calls on one shared latest-passed
 * time (per value, for a hotspot rule), so the cluster as a whole admits one call per
 * `durationMs * acquireCount / threshold` ms, queueing calls up to `maxQueueingTimeMs`.
 * Pacing cannot be leased.
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

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    return this.acquireEach(acquireCount, [scope], [threshold ?? this.spec.threshold]);
  }

  acquireEach(acquireCount: number, scopes: readonly string[], thresholds: readonly number[]): Promise<ClusterDecision> {
    if (acquireCount <= 0) return Promise.resolve(PASS);
    const keys: string[] = [];
    const args = [this.ctx.sharedNow(), this.maxQueueArg];
    for (let i = 0; i < scopes.length; i++) {
      const threshold = this.ctx.effectiveThreshold(thresholds[i]!, this.spec.thresholdType);
      if (threshold <= 0) return Promise.resolve(i === 0 ? BLOCK : { status: 'block', retryAfterMs: undefined, index: i });
      const costMs = (this.spec.durationMs * acquireCount) / threshold;
      keys.push(scopes[i] === '' ? this.baseKey : `${this.baseKey}:${scopes[i]}`);
      args.push(String(costMs), String(Math.ceil(costMs + this.spec.maxQueueingTimeMs) + 1000));
    }
    return this.ctx.gate.run(PACE_SCRIPT, keys, args, (reply, recoveredAfterMs) => {
      const status = replyNumber(reply, 0);
      const ms = replyNumber(reply, 1);
      const extra = recoveredAfterMs === undefined ? undefined : { recoveredAfterMs };
      if (status === 1) return extra === undefined ? PASS : { status: 'pass', ...extra };
      if (status === 2) return { status: 'wait', waitMs: ms, ...extra };
      return { status: 'block', retryAfterMs: ms, index: replyNumber(reply, 2), ...extra };
    });
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }
}
