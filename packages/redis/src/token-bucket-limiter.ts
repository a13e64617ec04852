import type { ClusterDecision, ClusterLimiter, ClusterTokenBucketSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, type BatchCodec, type QueuedCheck } from './coalescing-queue';
import { replyNumber, ruleKey, scopeKey, type LimiterContext } from './limiter-context';
import { TOKEN_BUCKET_RELEASE_SCRIPT, TOKEN_BUCKET_SCRIPT } from './scripts/token-bucket-script';

/** One check waiting for its batch: one value (`keys` a string), or several, all or nothing. */
class BucketCheck implements QueuedCheck {
  resolve!: (decision: ClusterDecision) => void;
  readonly promise = new Promise<ClusterDecision>((resolve) => (this.resolve = resolve));

  constructor(
    readonly acquireCount: number,
    /** The value's key, or the keys of an array argument's values. */
    readonly keys: string | readonly string[],
    /** The threshold of each key, in the same shape. */
    readonly tokens: number | readonly number[],
  ) {}
}

/** What a passed check took, to give back with `release()`: the script's time at the take. */
class BucketReceipt {
  constructor(
    readonly keys: string | readonly string[],
    /** `now` as the script wrote it (exact). */
    readonly takenAt: string,
  ) {}
}

/** One refund waiting for its batch. */
class Refund implements QueuedCheck {
  constructor(
    readonly key: string,
    readonly takenAt: string,
    readonly count: number,
  ) {}

  resolve(): void {
    // Fire and forget: nobody waits for a refund.
  }
}

/**
 * A QPS `reject` hotspot rule in the store: one token bucket per parameter value (`scope`),
 * shared by every instance, refilled exactly as the local rule refills. The checks made in one
 * tick, whatever their values, go to Redis as one script call (every value of a rule shares one
 * hash slot), decided in request order; consecutive checks of one value each with the same
 * count and threshold travel as one segment of three arguments plus a key each. A value's key
 * expires once idle for long enough for its bucket to be full again (at least 5 s), and at most
 * twice that, so a flood of distinct values costs Redis memory only while it lasts.
 * {@link TokenBucketLimiter.release} gives a refused call's tokens back, coalesced per tick.
 */
export class TokenBucketLimiter implements ClusterLimiter, BatchCodec<BucketCheck> {
  readonly script = TOKEN_BUCKET_SCRIPT;
  private readonly baseKey: string;
  private readonly burstArg: string;
  private readonly durationArg: string;
  private readonly queue: CoalescingQueue<BucketCheck>;
  private readonly refunds: CoalescingQueue<Refund>;

  constructor(
    private readonly spec: ClusterTokenBucketSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = ruleKey(ctx.prefix, 't', spec.key);
    this.burstArg = String(spec.burstCount);
    this.durationArg = String(spec.durationMs);
    this.queue = new CoalescingQueue(ctx.gate, this);
    this.refunds = new CoalescingQueue(ctx.gate, REFUND_CODEC);
  }

  acquire(acquireCount: number, scope: string, threshold?: number): Promise<ClusterDecision> {
    const check = new BucketCheck(
      acquireCount,
      scopeKey(this.baseKey, scope),
      this.tokensOf(threshold ?? this.spec.threshold),
    );
    this.queue.add(check);
    return check.promise;
  }

  acquireEach(
    acquireCount: number,
    scopes: readonly string[],
    thresholds: readonly number[],
  ): Promise<ClusterDecision> {
    if (scopes.length === 1) return this.acquire(acquireCount, scopes[0]!, thresholds[0]);
    const keys: string[] = [];
    const tokens: number[] = [];
    for (let i = 0; i < scopes.length; i++) {
      keys.push(scopeKey(this.baseKey, scopes[i]!));
      tokens.push(this.tokensOf(thresholds[i]!));
    }
    const check = new BucketCheck(acquireCount, keys, tokens);
    this.queue.add(check);
    return check.promise;
  }

  tryAcquireLeased(): undefined {
    return undefined;
  }

  /**
   * A value's tokens per duration in force: its threshold (× the live instances for
   * `'perInstance'`), with the bucket (+ `burstCount`) at most 2^53 − 1, as the local rule's,
   * so the script's token arithmetic stays exact.
   */
  private tokensOf(threshold: number): number {
    const tokens = this.ctx.effectiveThreshold(threshold, this.spec.thresholdType);
    return Math.min(tokens, Number.MAX_SAFE_INTEGER - this.spec.burstCount);
  }

  /**
   * Gives back what a passed check took (its `receipt`), for a call that did not run: queued
   * and sent at the end of the tick with the others, never awaited. A bucket refilled since the
   * take is left alone (see {@link TOKEN_BUCKET_RELEASE_SCRIPT}).
   */
  release(acquireCount: number, _scopes: readonly string[], receipt: unknown): void {
    if (!(receipt instanceof BucketReceipt) || acquireCount <= 0) return;
    const { keys, takenAt } = receipt;
    if (typeof keys === 'string') this.refunds.add(new Refund(keys, takenAt, acquireCount));
    else for (const key of keys) this.refunds.add(new Refund(key, takenAt, acquireCount));
  }

  encode(batch: readonly BucketCheck[]): { keys: string[]; args: string[] } {
    const keys: string[] = [];
    const args = [this.ctx.sharedNow(), this.burstArg, this.durationArg];
    // The open segment of single-value checks: where its count is, and what its checks share.
    let countAt = -1;
    let count = 0;
    let acquire = Number.NaN;
    let tokens = Number.NaN;
    for (const check of batch) {
      if (typeof check.keys === 'string') {
        keys.push(check.keys);
        if (countAt >= 0 && check.acquireCount === acquire && check.tokens === tokens) {
          count++;
          continue;
        }
        if (countAt >= 0) args[countAt] = String(count);
        acquire = check.acquireCount;
        tokens = check.tokens as number;
        countAt = args.length;
        count = 1;
        args.push('', String(acquire), String(tokens));
        continue;
      }
      if (countAt >= 0) args[countAt] = String(count);
      countAt = -1;
      const each = check.tokens as readonly number[];
      args.push(String(-check.keys.length), String(check.acquireCount));
      for (let j = 0; j < check.keys.length; j++) {
        keys.push(check.keys[j]!);
        args.push(String(each[j]!));
      }
    }
    if (countAt >= 0) args[countAt] = String(count);
    return { keys, args };
  }

  decode(reply: unknown, batch: readonly BucketCheck[], recoveredAfterMs: number | undefined): void {
    if (!Array.isArray(reply) || reply.length < batch.length + 1)
      throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
    const takenAt = String(reply[0]);
    let refused = batch.length + 1;
    for (let i = 0; i < batch.length; i++) {
      const check = batch[i]!;
      // The first answer after an outage carries the recovery, once.
      const recovered = i === 0 && recoveredAfterMs !== undefined ? recoveredAfterMs : undefined;
      if (replyNumber(reply, i + 1) === 1) {
        const receipt = new BucketReceipt(check.keys, takenAt);
        check.resolve(
          recovered === undefined
            ? { status: 'pass', receipt }
            : { status: 'pass', receipt, recoveredAfterMs: recovered },
        );
        continue;
      }
      const retry = replyNumber(reply, refused);
      const index = replyNumber(reply, refused + 1);
      refused += 2;
      const retryAfterMs = retry < 0 ? undefined : retry;
      check.resolve(
        recovered === undefined
          ? { status: 'block', retryAfterMs, index }
          : { status: 'block', retryAfterMs, index, recoveredAfterMs: recovered },
      );
    }
  }
}

/** Writes a batch of refunds as one release script call; its reply is not needed. */
const REFUND_CODEC: BatchCodec<Refund> = {
  script: TOKEN_BUCKET_RELEASE_SCRIPT,
  encode(batch) {
    const keys: string[] = [];
    const args: string[] = [];
    for (const refund of batch) {
      keys.push(refund.key);
      args.push(refund.takenAt, String(refund.count));
    }
    return { keys, args };
  },
  decode() {
    // Nothing to tell: refunds are best effort.
  },
};
