import type { ClusterDecision, ClusterUnavailable } from '@floodgate/core/cluster';
import type { RedisScript } from './redis-script';
import type { ReplyHandler, StoreGate } from './store-gate';

/** One check waiting for its batch: `resolve` settles the caller's promise. */
export interface QueuedCheck {
  resolve(decision: ClusterDecision): void;
}

/** How one limiter writes a batch of its checks as one script call, and reads the answer. */
export interface BatchCodec<C extends QueuedCheck> {
  /** The script run for a batch. */
  readonly script: RedisScript;
  /** The script's keys and arguments for `batch`, in request order. */
  encode(batch: readonly C[]): { keys: string[]; args: string[] };
  /**
   * Resolves every check of `batch` from the script's reply (`recoveredAfterMs` set when the
   * reply ends an outage). Throws on a reply it cannot read: the checks it left then fall back.
   */
  decode(reply: unknown, batch: readonly C[], recoveredAfterMs: number | undefined): void;
}

/**
 * Most checks in one script call. A full batch leaves at once rather than at the end of the tick,
 * so Redis runs one batch while this process is still making the next checks: a script blocks
 * Redis while it runs, and short batches overlap the two.
 */
export const MAX_BATCH = 16;

/** One batch in flight: the store's answer settles every check in it. */
class SentBatch<C extends QueuedCheck> implements ReplyHandler {
  constructor(
    private readonly codec: BatchCodec<C>,
    private readonly batch: readonly C[],
  ) {}

  replied(reply: unknown, recoveredAfterMs: number | undefined): void {
    this.codec.decode(reply, this.batch, recoveredAfterMs);
  }

  unavailable(decision: ClusterUnavailable): void {
    // A check already resolved by `decode` keeps its answer: a promise settles once.
    for (const check of this.batch) check.resolve(decision);
  }
}

/**
 * Coalesces the checks one rule makes within a tick into one script call: checks are queued as
 * they come, and once the current tick's work is done (`process.nextTick`) the queue goes to
 * Redis as one script call (or several of at most {@link MAX_BATCH}) that decides each check in
 * request order, exactly as one call per check would (n of m admitted, each refusal with its
 * retry-after). The checks of one batch share one round trip, one timeout and one answer from the
 * breaker, so a check waits at most the backend's timeout plus the tick it was made in.
 */
export class CoalescingQueue<C extends QueuedCheck> {
  private queue: C[] = [];
  private readonly flushNow = (): void => this.flush();

  constructor(
    private readonly gate: StoreGate,
    private readonly codec: BatchCodec<C>,
  ) {}

  /** Queues `check` for the batch sent at the end of this tick, or now when the batch is full. */
  add(check: C): void {
    const size = this.queue.push(check);
    if (size === MAX_BATCH) this.flush();
    else if (size === 1) process.nextTick(this.flushNow);
  }

  private flush(): void {
    const batch = this.queue;
    if (batch.length === 0) return; // sent when it filled up
    this.queue = [];
    const { keys, args } = this.codec.encode(batch);
    this.gate.run(this.codec.script, keys, args, new SentBatch(this.codec, batch));
  }
}

/** The index of `key` in `keys`, adding it when new (a script's KEYS, deduplicated). */
export function keyIndex(keys: string[], indexes: Map<string, number>, key: string): number {
  let index = indexes.get(key);
  if (index === undefined) {
    index = keys.push(key);
    indexes.set(key, index);
  }
  return index;
}
