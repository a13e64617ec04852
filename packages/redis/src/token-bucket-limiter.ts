import type { ClusterDecision, ClusterLimiter, ClusterTokenBucketSpec } from '@floodgate/core/cluster';
import type { LimiterContext } from './limiter-context';
import { replyNumber } from './reply-number';
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

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    return this.acquireEach(acquireCount, [scope], [threshold ?? this.spec.threshold]);
  }

  acquireEach(acquireCount: number, scopes: readonly string[], thresholds: readonly number[]): Promise<ClusterDecision> {
    const { durationMs, burstCount } = this.spec;
    const keys: string[] = [];
    const args = [this.ctx.sharedNow(), this.burstArg, this.durationArg, String(acquireCount)];
    for (let i = 0; i < scopes.length; i++) {
      const tokens = this.ctx.effectiveThreshold(thresholds[i]!, this.spec.thresholdType);
      // Idle for this long, a value's bucket is full again: its key can go.
      const ttlMs = tokens > 0 ? Math.ceil((durationMs * (tokens + burstCount)) / tokens) + durationMs : durationMs;
      keys.push(`${this.baseKey}:${scopes[i]}`);
      args.push(String(tokens), String(ttlMs));
    }
    return this.ctx.gate.run(TOKEN_BUCKET_SCRIPT, keys, args, (reply, recoveredAfterMs) => {
      const passed = replyNumber(reply, 0) === 1;
      const extra = recoveredAfterMs === undefined ? undefined : { recoveredAfterMs };
      if (passed) return extra === undefined ? PASS : { status: 'pass', ...extra };
      const retry = replyNumber(reply, 1);
      return { status: 'block', retryAfterMs: retry < 0 ? undefined : retry, index: replyNumber(reply, 2), ...extra };
    });
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }
}
