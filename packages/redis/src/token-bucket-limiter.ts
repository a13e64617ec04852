import type { ClusterDecision, ClusterLimiter, ClusterTokenBucketSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, keyIndex, type BatchCodec } from './coalescing-queue';
import type { LimiterContext } from './limiter-context';
import { MultiKeyCheck } from './multi-key-check';
import { replyNumber } from './reply-number';
import { ruleKey, scopeKey } from './rule-key';
import { TOKEN_BUCKET_SCRIPT } from './scripts/token-bucket-script';

const PASS: ClusterDecision = Object.freeze({ status: 'pass' });

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
  private readonly burstArg: string;
  private readonly durationArg: string;
  private readonly queue: CoalescingQueue<MultiKeyCheck>;

  constructor(
    private readonly spec: ClusterTokenBucketSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = ruleKey(ctx.prefix, 't', spec.key);
    this.burstArg = String(spec.burstCount);
    this.durationArg = String(spec.durationMs);
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
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const args = [this.ctx.sharedNow(), this.burstArg, this.durationArg];
    for (let start = 0; start < batch.length; ) {
      const end = groupEnd(batch, start);
      const check = batch[start]!;
      args.push(String(end - start), String(check.acquireCount), String(check.keys.length));
      for (let j = 0; j < check.keys.length; j++) args.push(String(keyIndex(keys, indexes, check.keys[j]!)), String(check.values[j]!));
      start = end;
    }
    return { keys, args };
  }

  decode(reply: unknown, batch: readonly MultiKeyCheck[], recoveredAfterMs: number | undefined): void {
    let at = 0;
    for (let start = 0; start < batch.length; at += 3) {
      const end = groupEnd(batch, start);
      const passed = replyNumber(reply, at);
      const retry = replyNumber(reply, at + 1);
      const index = replyNumber(reply, at + 2);
      for (let i = start; i < end; i++) {
        // The first answer after an outage carries the recovery, once.
        const extra = i === 0 && recoveredAfterMs !== undefined ? { recoveredAfterMs } : undefined;
        batch[i]!.resolve(
          i - start < passed ? (extra === undefined ? PASS : { status: 'pass', ...extra }) : { status: 'block', retryAfterMs: retry < 0 ? undefined : retry, index, ...extra },
        );
      }
      start = end;
    }
  }
}

/**
 * The end of the group of identical checks starting at `start` (one value, the same count and
 * threshold): the script decides such a run in one step.
 */
function groupEnd(batch: readonly MultiKeyCheck[], start: number): number {
  const first = batch[start]!;
  let end = start + 1;
  if (first.keys.length !== 1) return end;
  while (end < batch.length) {
    const next = batch[end]!;
    if (next.keys.length !== 1 || next.keys[0] !== first.keys[0] || next.acquireCount !== first.acquireCount || next.values[0] !== first.values[0]) break;
    end++;
  }
  return end;
}
