import type { ClusterDecision, ClusterLimiter, ClusterPaceSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, keyIndex, type BatchCodec } from './coalescing-queue';
import type { LimiterContext } from './limiter-context';
import { MultiKeyCheck, resolveMultiKey } from './multi-key-check';
import { ruleKey, scopeKey } from './rule-key';
import { PACE_SCRIPT } from './scripts/pace-script';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });
const BLOCK: ClusterDecision = Object.freeze({ status: 'block', retryAfterMs: undefined });

/**
 * A `throttle` rule in the store: every instance paces its calls on one shared latest-passed
 * time (per value, for a hotspot rule), so the cluster as a whole admits one call per
 * `durationMs * acquireCount / threshold` ms, queueing calls up to `maxQueueingTimeMs`. The
 * checks made in one tick go to Redis as one script call, decided in request order. Pacing
 * cannot be leased.
 */
export class PaceLimiter implements ClusterLimiter, BatchCodec<MultiKeyCheck> {
  readonly script = PACE_SCRIPT;
  private readonly baseKey: string;
  private readonly queue: CoalescingQueue<MultiKeyCheck>;

  constructor(
    private readonly spec: ClusterPaceSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = ruleKey(ctx.prefix, 'p', spec.key);
    this.queue = new CoalescingQueue(ctx.gate, this);
  }

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    return this.acquireEach(acquireCount, [scope], [threshold ?? this.spec.threshold]);
  }

  acquireEach(
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
  ): Promise<ClusterDecision> {
    if (acquireCount <= 0) return Promise.resolve(PASS);
    const keys: string[] = [];
    const costs: number[] = [];
    for (let i = 0; i < scopes.length; i++) {
      const threshold = this.ctx.effectiveThreshold(thresholds[i]!, this.spec.thresholdType);
      if (threshold <= 0)
        return Promise.resolve(i === 0 ? BLOCK : { status: 'block', retryAfterMs: undefined, index: i });
      keys.push(scopeKey(this.baseKey, scopes[i]!));
      costs.push((this.spec.durationMs * acquireCount) / threshold);
    }
    const check = new MultiKeyCheck(acquireCount, keys, costs);
    this.queue.add(check);
    return check.promise;
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }

  encode(batch: readonly MultiKeyCheck[]): { keys: string[]; args: string[] } {
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const maxQueue = this.spec.maxQueueingTimeMs;
    const args = [this.ctx.sharedNow(), String(maxQueue)];
    for (const check of batch) {
      args.push(String(check.keys.length));
      for (let j = 0; j < check.keys.length; j++) {
        const costMs = check.values[j]!;
        // Idle for this long, a key's latest pass no longer delays anyone.
        args.push(
          String(keyIndex(keys, indexes, check.keys[j]!)),
          String(costMs),
          String(Math.min(Math.ceil(costMs + maxQueue) + 1000, Number.MAX_SAFE_INTEGER)),
        );
      }
    }
    return { keys, args };
  }

  decode(reply: unknown, batch: readonly MultiKeyCheck[], recoveredAfterMs: number | undefined): void {
    resolveMultiKey(reply, batch, recoveredAfterMs);
  }
}
