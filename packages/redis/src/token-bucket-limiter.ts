import type { ClusterDecision, ClusterLimiter, ClusterTokenBucketSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, keyIndex, type BatchCodec } from './coalescing-queue';
import type { LimiterContext } from './limiter-context';
import { MultiKeyCheck, resolveMultiKey } from './multi-key-check';
import { ruleKey, scopeKey } from './rule-key';
import { TOKEN_BUCKET_SCRIPT } from './scripts/token-bucket-script';

/**
 * The shortest life of a value's key, in ms: a key kept longer than its bucket needs to refill
 * changes nothing (its bucket is full either way), and a floor keeps a shared clock (`now`) that
 * runs apart from Redis's own from expiring a bucket early.
 */
const MIN_TTL_MS = 5000;

/**
 * A QPS `reject` hotspot rule in the store: one token bucket per parameter value (`scope`),
 * shared by every instance, refilled exactly as the local rule refills. The checks made in one
 * tick, whatever their values, go to Redis as one script call (every value of a rule shares one
 * hash slot), decided in request order. A value's key expires once idle long enough for its
 * bucket to be full again (at least 5 s), so a flood of distinct values costs Redis memory only while it lasts.
 */
export class TokenBucketLimiter implements ClusterLimiter, BatchCodec<MultiKeyCheck> {
  readonly script = TOKEN_BUCKET_SCRIPT;
  private readonly baseKey: string;
  private readonly queue: CoalescingQueue<MultiKeyCheck>;

  constructor(
    private readonly spec: ClusterTokenBucketSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = ruleKey(ctx.prefix, 't', spec.key);
    this.queue = new CoalescingQueue(ctx.gate, this);
  }

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    return this.acquireEach(acquireCount, [scope], [threshold ?? this.spec.threshold]);
  }

  acquireEach(acquireCount: number, scopes: readonly string[], thresholds: readonly number[]): Promise<ClusterDecision> {
    const keys: string[] = [];
    const tokens: number[] = [];
    for (let i = 0; i < scopes.length; i++) {
      keys.push(scopeKey(this.baseKey, scopes[i]!));
      tokens.push(this.ctx.effectiveThreshold(thresholds[i]!, this.spec.thresholdType));
    }
    const check = new MultiKeyCheck(acquireCount, keys, tokens);
    this.queue.add(check);
    return check.promise;
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }

  encode(batch: readonly MultiKeyCheck[]): { keys: string[]; args: string[] } {
    const { durationMs, burstCount } = this.spec;
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const args = [this.ctx.sharedNow(), String(burstCount), String(durationMs)];
    for (const check of batch) {
      args.push(String(check.acquireCount), String(check.keys.length));
      for (let j = 0; j < check.keys.length; j++) {
        const tokens = check.values[j]!;
        // Idle for this long, a value's bucket is full again: its key can go.
        const ttlMs = Math.max(MIN_TTL_MS, tokens > 0 ? Math.ceil((durationMs * (tokens + burstCount)) / tokens) + durationMs : durationMs);
        args.push(String(keyIndex(keys, indexes, check.keys[j]!)), String(tokens), String(Math.min(Math.ceil(ttlMs), Number.MAX_SAFE_INTEGER)));
      }
    }
    return { keys, args };
  }

  decode(reply: unknown, batch: readonly MultiKeyCheck[], recoveredAfterMs: number | undefined): void {
    resolveMultiKey(reply, batch, recoveredAfterMs);
  }
}
