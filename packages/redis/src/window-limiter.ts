import type { ClusterDecision, ClusterLimiter, ClusterWindowSpec } from '@floodgate/core/cluster';
import { CoalescingQueue, keyIndex, type BatchCodec, type QueuedCheck } from './coalescing-queue';
import { replyNumber, ruleKey, scopeKey, type LimiterContext } from './limiter-context';
import { WINDOW_RELEASE_SCRIPT, WINDOW_SCRIPT } from './scripts/window-script';

/** The engine's second-level window: 2 buckets of 500 ms (Sentinel's defaults), as the script. */
const BUCKET_MS_ARG = '500';
/** Most scopes (origins of an `'other'` rule) whose lease is kept; the oldest go first. */
const MAX_SCOPES = 1000;

/**
 * Tokens leased to this instance for one rule (and scope): taken from the store in a batch,
 * counted there as admitted, and spent here without a round trip until they run out or the
 * store's bucket they were counted in ends (using them later could exceed the limit in the next
 * window). Also remembers when the store said the window is full, so calls do not ask again
 * before a bucket leaves the window.
 */
class TokenLease {
  /** Tokens left to spend. */
  tokens = 0;
  /** Local time when the leased tokens expire (the end of their bucket). */
  expiresAt = Number.NEGATIVE_INFINITY;
  /** Room left in the store's window at the last answer, valid until `knownUntil`. */
  room = Number.POSITIVE_INFINITY;
  /** Local time until which `room` holds (the window only frees room when a bucket ends). */
  knownUntil = Number.NEGATIVE_INFINITY;
  /** Local time when a blocked call could pass again, from the store's last refusal. */
  retryAt = Number.NEGATIVE_INFINITY;
  /** The round trip in flight for this lease, shared by the calls that need tokens meanwhile. */
  fetching: Promise<ClusterDecision> | undefined;

  /** Takes `count` leased tokens if there are enough and they have not expired. */
  take(count: number, now: number): boolean {
    if (now >= this.expiresAt || this.tokens < count) return false;
    this.tokens -= count;
    return true;
  }

  /** Whether the store's window is known to have no room for `count` more at `now`. */
  isFull(count: number, now: number): boolean {
    return now < this.knownUntil && count > this.room;
  }

  /** Records a lease of `tokens` (after what the asking call took) valid for `ms`. */
  granted(tokens: number, room: number, ms: number, now: number): void {
    this.tokens = tokens;
    this.expiresAt = now + ms;
    this.noteRoom(room, ms, now);
  }

  /** Records the room left in the store's window, valid for `ms`. */
  noteRoom(room: number, ms: number, now: number): void {
    this.room = room;
    this.knownUntil = now + ms;
  }
}

/** One check waiting for its batch. */
class WindowCheck implements QueuedCheck {
  resolve!: (decision: ClusterDecision) => void;
  readonly promise = new Promise<ClusterDecision>((resolve) => (this.resolve = resolve));

  constructor(
    readonly key: string,
    readonly lease: TokenLease,
    readonly acquireCount: number,
    /** 0: take exactly acquireCount; else take up to this many (a lease refill). */
    readonly leaseSize: number,
    readonly sentAt: number,
  ) {}
}

/** What a check admitted in the store took, to give back with `release()`: its key and bucket. */
class BucketReceipt {
  constructor(
    readonly key: string,
    /** The bucket's number, as the script wrote it. */
    readonly bucket: string,
    readonly lease: TokenLease,
  ) {}
}

/** What a call took from this instance's lease: given back to the lease while it lasts. */
class LeaseReceipt {
  constructor(
    readonly lease: TokenLease,
    /** The lease's expiry when the tokens were taken: a later lease is another bucket's. */
    readonly expiresAt: number,
  ) {}
}

/** One refund waiting for its batch. */
class Refund implements QueuedCheck {
  constructor(
    readonly key: string,
    readonly bucket: string,
    readonly count: number,
  ) {}

  resolve(): void {
    // Fire and forget: nobody waits for a refund.
  }
}

/**
 * A `reject` rule in the store: passes while the calls admitted by every instance in the
 * sliding window + acquireCount <= threshold. The checks made in one tick go to Redis as one
 * script call deciding each in request order. With `leaseTokens`, takes tokens in batches and
 * spends them in process. Either way, once the store says the window is full, calls are
 * refused here without a round trip until a bucket leaves the window (the earliest the window
 * can have room again), so blocking stays cheap under a flood. {@link WindowLimiter.release}
 * gives a refused call's tokens back: to the lease they came from while it lasts, else to the
 * store's bucket they were counted in (coalesced per tick, fire and forget).
 */
export class WindowLimiter implements ClusterLimiter, BatchCodec<WindowCheck> {
  readonly script = WINDOW_SCRIPT;
  private readonly baseKey: string;
  private readonly leases = new Map<string, TokenLease>();
  private readonly queue: CoalescingQueue<WindowCheck>;
  private readonly refunds: CoalescingQueue<Refund>;

  constructor(
    private readonly spec: ClusterWindowSpec,
    private readonly ctx: LimiterContext,
  ) {
    this.baseKey = ruleKey(ctx.prefix, 'w', spec.key);
    this.queue = new CoalescingQueue(ctx.gate, this);
    this.refunds = new CoalescingQueue(ctx.gate, REFUND_CODEC);
  }

  acquire(acquireCount: number, scope: string): Promise<ClusterDecision> {
    const lease = this.leaseOf(scope);
    const now = this.ctx.localNow();
    if (this.spec.leaseTokens > 0 && lease.take(acquireCount, now))
      return Promise.resolve({ status: 'pass', receipt: new LeaseReceipt(lease, lease.expiresAt) });
    if (lease.isFull(acquireCount, now)) return Promise.resolve(blocked(lease, now));
    if (this.spec.leaseTokens === 0) return this.ask(lease, scope, acquireCount, 0, now);
    return this.fetchLease(lease, scope, acquireCount);
  }

  tryAcquireLeased(acquireCount: number, scope: string): boolean | undefined {
    if (this.spec.leaseTokens === 0) return undefined;
    const lease = this.leaseOf(scope);
    const now = this.ctx.localNow();
    if (lease.take(acquireCount, now)) return true;
    if (lease.isFull(acquireCount, now)) return false;
    if (lease.fetching === undefined) void this.fetchLease(lease, scope, 0);
    return undefined;
  }

  /**
   * Gives back what a passed call took (its `receipt`), for a call that did not run: tokens of
   * this instance's lease go back to it while it lasts; tokens counted in the store are queued
   * for one release script call at the end of the tick, never awaited (see
   * {@link WINDOW_RELEASE_SCRIPT}), and the room this instance knows of grows by as much.
   */
  release(acquireCount: number, _scopes: readonly string[], receipt: unknown): void {
    if (acquireCount <= 0) return;
    const now = this.ctx.localNow();
    if (receipt instanceof LeaseReceipt) {
      const lease = receipt.lease;
      if (lease.expiresAt === receipt.expiresAt && now < lease.expiresAt) lease.tokens += acquireCount;
      return;
    }
    if (!(receipt instanceof BucketReceipt)) return;
    if (now < receipt.lease.knownUntil) receipt.lease.room += acquireCount;
    this.refunds.add(new Refund(receipt.key, receipt.bucket, acquireCount));
  }

  encode(batch: readonly WindowCheck[]): { keys: string[]; args: string[] } {
    const threshold = this.ctx.effectiveThreshold(this.spec.threshold, this.spec.thresholdType);
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const args = [this.ctx.sharedNow(), String(threshold), BUCKET_MS_ARG];
    for (let start = 0; start < batch.length;) {
      const end = groupEnd(batch, start);
      const check = batch[start]!;
      args.push(
        String(keyIndex(keys, indexes, check.key)),
        String(check.acquireCount),
        String(check.leaseSize),
        String(end - start),
      );
      start = end;
    }
    return { keys, args };
  }

  decode(reply: unknown, batch: readonly WindowCheck[], recoveredAfterMs: number | undefined): void {
    const msLeft = replyNumber(reply, 0);
    const bucket = String(replyNumber(reply, 1));
    let at = 2;
    for (let start = 0; start < batch.length; at += 3) {
      const end = groupEnd(batch, start);
      const passed = replyNumber(reply, at);
      const value = replyNumber(reply, at + 1);
      const room = replyNumber(reply, at + 2);
      const first = batch[start]!;
      // The room is known after the whole group: what later checks (and this instance) can count on.
      first.lease.noteRoom(room, msLeft, first.sentAt);
      for (let i = start; i < end; i++) {
        const check = batch[i]!;
        // The first answer after an outage carries the recovery, once.
        const recovered = i === 0 && recoveredAfterMs !== undefined ? { recoveredAfterMs } : undefined;
        if (i - start < passed) {
          if (check.leaseSize > 0) check.lease.granted(value - check.acquireCount, room, msLeft, check.sentAt);
          const receipt = new BucketReceipt(check.key, bucket, check.lease);
          check.resolve(
            recovered === undefined ? { status: 'pass', receipt } : { status: 'pass', receipt, ...recovered },
          );
        } else {
          check.lease.retryAt = value < 0 ? Number.NaN : check.sentAt + value;
          check.resolve({ status: 'block', retryAfterMs: value < 0 ? undefined : value, ...recovered });
        }
      }
      start = end;
    }
  }

  /**
   * Takes tokens from the lease, refilling it when needed. Calls that find a refill in flight
   * wait for it and share its tokens instead of each asking Redis; if it could not reach Redis,
   * they fall back with it rather than each waiting out another timeout.
   */
  private async fetchLease(lease: TokenLease, scope: string, acquireCount: number): Promise<ClusterDecision> {
    let now = this.ctx.localNow();
    while (lease.fetching !== undefined) {
      const shared = await lease.fetching;
      if (shared.status === 'unavailable') return shared;
      now = this.ctx.localNow();
      if (lease.take(acquireCount, now)) return { status: 'pass', receipt: new LeaseReceipt(lease, lease.expiresAt) };
      if (lease.isFull(acquireCount, now)) return blocked(lease, now);
    }
    const asking = this.ask(lease, scope, acquireCount, Math.max(this.spec.leaseTokens, acquireCount), now);
    lease.fetching = asking;
    try {
      return await asking;
    } finally {
      if (lease.fetching === asking) lease.fetching = undefined;
    }
  }

  /** Queues a check taking `acquireCount` (or, leasing, up to `leaseSize` tokens) for this tick's batch. */
  private ask(
    lease: TokenLease,
    scope: string,
    acquireCount: number,
    leaseSize: number,
    sentAt: number,
  ): Promise<ClusterDecision> {
    const check = new WindowCheck(scopeKey(this.baseKey, scope), lease, acquireCount, leaseSize, sentAt);
    this.queue.add(check);
    return check.promise;
  }

  private leaseOf(scope: string): TokenLease {
    let lease = this.leases.get(scope);
    if (lease === undefined) {
      if (this.leases.size >= MAX_SCOPES) this.leases.delete(this.leases.keys().next().value!);
      lease = new TokenLease();
      this.leases.set(scope, lease);
    }
    return lease;
  }
}

/**
 * The end of the group of identical checks starting at `start` (same scope, same count, no
 * lease): the script decides such a run in one step.
 */
function groupEnd(batch: readonly WindowCheck[], start: number): number {
  const first = batch[start]!;
  let end = start + 1;
  if (first.leaseSize > 0) return end;
  while (end < batch.length) {
    const next = batch[end]!;
    if (next.key !== first.key || next.acquireCount !== first.acquireCount || next.leaseSize !== 0) break;
    end++;
  }
  return end;
}

function blocked(lease: TokenLease, now: number): ClusterDecision {
  const retryAfterMs = Number.isNaN(lease.retryAt) ? undefined : Math.max(0, lease.retryAt - now);
  return { status: 'block', retryAfterMs };
}

/** Writes a batch of refunds as one release script call; its reply is not needed. */
const REFUND_CODEC: BatchCodec<Refund> = {
  script: WINDOW_RELEASE_SCRIPT,
  encode(batch) {
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const args: string[] = [];
    for (const refund of batch)
      args.push(String(keyIndex(keys, indexes, refund.key)), refund.bucket, String(refund.count));
    return { keys, args };
  },
  decode() {
    // Nothing to tell: refunds are best effort.
  },
};
