import type { ClusterDecision, ClusterLimiter, ClusterTokenBucketSpec } from '@floodgate/core';
import { replyNumber, type LimiterContext } from './limiter-context';
import { TOKEN_BUCKET_SCRIPT } from './scripts/token-bucket-script';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });

/**
 * A QPS `reject` hotspot rule in the store: one token bucket per parameter value (`scope`),
 * shared by every instance. A value's key expires once idle long enough for its bucket to be
 * full again, so a flood of distinct values costs Redis memory only while it lasts.
 */
export class TokenBucketLimiter implements ClusterLimiter {
  private readonly baseKey: string;
  private readonly burstArg: string;
  private readonly durationArg: string;

  constructor(
    private readonly spec: ClusterTokenBucketSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = `${ctx.prefix}:t:${spec.key}`;
    this.burstArg = String(spec.burstCount);
    this.durationArg = String(spec.durationMs);
  }

  acquire(acquireCount: number, scope: string, thresholdOverride?: number): Promise<ClusterDecision> {
    const tokens = this.ctx.effectiveThreshold(thresholdOverride ?? this.spec.threshold, this.spec.thresholdType);
    const max = tokens + this.spec.burstCount;
    // Idle for this long, a value's bucket is full again: its key can go.
    const ttlMs = tokens > 0 ? Math.ceil((this.spec.durationMs * max) / tokens) + this.spec.durationMs : this.spec.durationMs;
    const args = [this.ctx.sharedNow(), String(tokens), this.burstArg, this.durationArg, String(acquireCount), String(ttlMs)];
    return this.ctx.gate.run(TOKEN_BUCKET_SCRIPT, `${this.baseKey}:${scope}`, args, (reply, recoveredAfterMs) => {
      const passed = replyNumber(reply, 0) === 1;
      const extra = recoveredAfterMs === undefined ? undefined : { recoveredAfterMs };
      if (passed) return extra === undefined ? PASS : { status: 'pass', ...extra };
      const retry = replyNumber(reply, 1);
      return { status: 'block', retryAfterMs: retry < 0 ? undefined : retry, ...extra };
    });
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }
}
