import type { ClusterDecision, ClusterLimiter, ClusterPaceSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, keyIndex, type BatchCodec, type QueuedCheck } from './coalescing-queue';
import { replyNumber, ruleKey, scopeKey, type LimiterContext } from './limiter-context';
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

/**
 * One check of a hotspot or pacing rule waiting for its batch: it names one key or several (a
 * hotspot rule's array argument), each with a number for the script (a token count or a pacing
 * cost).
 */
class MultiKeyCheck implements QueuedCheck {
  resolve!: (decision: ClusterDecision) => void;
  readonly promise = new Promise<ClusterDecision>((resolve) => (this.resolve = resolve));

  constructor(
    readonly acquireCount: number,
    readonly keys: readonly string[],
    readonly values: readonly number[],
  ) {}
}

/**
 * Resolves each check of `batch` from a reply of three fields per check, `status, ms, index`:
 * `1` passed, `2` passed after waiting `ms` (pacing), `0` refused by its key at `index` with
 * `ms` to wait before a retry (-1: never).
 */
function resolveMultiKey(reply: unknown, batch: readonly MultiKeyCheck[], recoveredAfterMs: number | undefined): void {
  for (let i = 0; i < batch.length; i++) {
    const status = replyNumber(reply, 3 * i);
    const ms = replyNumber(reply, 3 * i + 1);
    // The first answer after an outage carries the recovery, once.
    const extra = i === 0 && recoveredAfterMs !== undefined ? { recoveredAfterMs } : undefined;
    let decision: ClusterDecision;
    if (status === 1) decision = extra === undefined ? PASS : { status: 'pass', ...extra };
    else if (status === 2) decision = { status: 'wait', waitMs: ms, ...extra };
    else
      decision = {
        status: 'block',
        retryAfterMs: ms < 0 ? undefined : ms,
        index: replyNumber(reply, 3 * i + 2),
        ...extra,
      };
    batch[i]!.resolve(decision);
  }
}
