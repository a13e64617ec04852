import type { Entry, EntryAttachment } from '../kernel/entry';
import { PRIORITIES, priorityIndex, type Priority } from '../kernel/priority';
import type { StatisticNode } from '../kernel/statistic-node';
import { BLOCKED, PASS, type TrafficController } from './traffic-controllers';

/**
 * How long a priority that asked for nothing keeps its share reserved, in ms: after that its idle
 * share is lent to the others. One second, the flow rules' window.
 */
export const PARTITION_IDLE_MS = 1000;

/**
 * A concurrency limit split into guaranteed shares by priority (`partitions` on a concurrency
 * `reject` flow rule), after Netflix concurrency-limits' `AbstractPartitionedLimiter`: priority
 * `p` is guaranteed `floor(share[p] × threshold)` calls in flight, and may use more while others
 * leave their shares idle.
 *
 * A call of priority `p` taking `n` passes when the total in flight with it stays within the
 * threshold, and either `p` stays within its guaranteed share, or enough is left beside it for
 * the unused guaranteed shares of every other priority that asked within the last
 * {@link PARTITION_IDLE_MS}: what a priority borrows is only what idle priorities are not using.
 *
 * Why not Netflix's exactly: its limiter lets a partition under its share in even when the total
 * is at the limit, so the total may exceed it; here the total never does. The price is that a
 * priority waking after an idle second may find its share lent out: it is refused until the
 * borrowers leave, and from its first call on (refused or not) nobody borrows its share again.
 * While every priority keeps asking, each one always gets its guaranteed share.
 *
 * It counts the calls of each priority it admitted, given back when their work settles (or when
 * a later check refuses them); the total is the greater of its own count and the resource's
 * calls in flight, so calls admitted under the rule before a reload changed it still count.
 */
export class PartitionedLimit implements TrafficController, EntryAttachment {
  /** Told of each admitted call's end (the flow checker attaches it to the entry). */
  readonly completions: EntryAttachment = this;
  /** Guaranteed calls in flight by priority index (critical, default, sheddable). */
  private readonly guaranteed: Float64Array;
  /** Calls in flight by priority index. */
  private readonly busy = new Float64Array(3);
  /** When each priority last asked (clock ms). */
  private readonly lastAsked = new Float64Array(3).fill(Number.NEGATIVE_INFINITY);
  private total = 0;

  constructor(
    private readonly threshold: number,
    shares: Readonly<Record<Priority, number>>,
  ) {
    this.guaranteed = Float64Array.from(PRIORITIES, (priority) => Math.floor(shares[priority] * threshold));
  }

  /** Calls in flight of `priority`. */
  inFlight(priority?: Priority): number {
    return priority === undefined ? this.total : this.busy[priorityIndex(priority)]!;
  }

  /** The calls in flight guaranteed to `priority`. */
  guaranteedFor(priority: Priority): number {
    return this.guaranteed[priorityIndex(priority)]!;
  }

  tryPass(
    node: StatisticNode | undefined,
    acquireCount: number,
    now: number,
    _canWait: boolean,
    priority: Priority,
  ): number {
    const p = priorityIndex(priority);
    this.lastAsked[p] = now;
    const total = Math.max(this.total, node?.concurrency ?? 0) + acquireCount;
    if (total > this.threshold) return BLOCKED;
    const busy = this.busy;
    if (busy[p]! + acquireCount > this.guaranteed[p]!) {
      let reserved = 0;
      for (let q = 0; q < 3; q++) {
        if (q === p || now - this.lastAsked[q]! >= PARTITION_IDLE_MS) continue;
        reserved += Math.max(0, this.guaranteed[q]! - busy[q]!);
      }
      if (total + reserved > this.threshold) return BLOCKED;
    }
    busy[p]! += acquireCount;
    this.total += acquireCount;
    return PASS;
  }

  retryAfterMs(): undefined {
    return undefined;
  }

  exited(): void {
    // Counted until its work settles (`freed`).
  }

  freed(entry: Entry): void {
    this.release(entry);
  }

  released(entry: Entry): void {
    this.release(entry);
  }

  private release(entry: Entry): void {
    this.busy[priorityIndex(entry.priority)]! -= entry.acquireCount;
    this.total -= entry.acquireCount;
  }
}
