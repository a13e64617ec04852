import type { Priority } from '../kernel/priority';
import type { StatisticNode } from '../kernel/statistic-node';
import { BLOCKED, PASS, type TrafficController } from './traffic-controllers';

/** Tokens borrowed around one bucket of the second-level window. */
interface BucketLedger {
  /** Tokens of borrowers admitted (and so counted by the statistics node) in this bucket. */
  recorded: number;
  /** Tokens of borrowers whose wait ends in this bucket: they count against its windows. */
  landing: number;
}

/**
 * `prioritized` QPS `reject` rules: Sentinel's `DefaultController` with priority occupation
 * (`tryOccupyNext`, `OccupyTimeoutProperty`). A call passes while every window that will hold it
 * stays within the threshold; a `'critical'` call that may wait and would be refused instead
 * takes a token of a coming bucket of the second-level window (2 buckets of 500 ms) and waits
 * until that bucket starts, at most `occupyTimeoutMs`.
 *
 * A borrowed token counts against the windows of the bucket it waits for, never against the
 * bucket it was taken in (where the engine records its pass at admission): so every window of
 * two buckets holds at most `threshold` tokens, borrowed ones included, and calls arriving in a
 * bucket that borrowers have claimed find that much less room. Without borrowers it decides as
 * `DefaultController` does.
 */
export class BorrowingWindow implements TrafficController {
  /** The ledger by bucket number (`floor(ms / bucketMs)`), pruned as buckets leave the window. */
  private readonly ledger = new Map<number, BucketLedger>();
  private oldest = Number.POSITIVE_INFINITY;
  /** The length of a bucket of the statistics node's second-level window, in ms (read at the first check). */
  private bucketMs = 500;

  constructor(
    private readonly threshold: number,
    private readonly occupyTimeoutMs: number,
  ) {}

  tryPass(node: StatisticNode, acquireCount: number, now: number, canWait: boolean, priority: Priority): number {
    const bucketMs = (this.bucketMs = node.second.windowLengthMs);
    const cur = Math.floor(now / bucketMs);
    if (this.ledger.size > 0) this.prune(cur);
    const previousPasses = node.previousBucketPasses(now);
    const currentPasses = node.passQps(now) - previousPasses;
    const prev = previousPasses - this.recorded(cur - 1) + this.landing(cur - 1);
    const current = currentPasses - this.recorded(cur) + this.landing(cur);
    const limit = this.threshold - acquireCount;
    if (prev + current <= limit && current + this.landing(cur + 1) <= limit) return PASS;
    if (priority !== 'critical' || !canWait || acquireCount <= 0) return BLOCKED;
    for (let k = cur + 1; k * bucketMs - now <= this.occupyTimeoutMs; k++) {
      const before = k - 1 === cur ? current : this.landing(k - 1);
      const at = this.landing(k);
      if (before + at <= limit && at + this.landing(k + 1) <= limit) {
        this.entry(cur).recorded += acquireCount;
        this.entry(k).landing += acquireCount;
        return k * bucketMs - now;
      }
    }
    return BLOCKED;
  }

  retryAfterMs(node: StatisticNode, _acquireCount: number, now: number): number | undefined {
    return node.msUntilPassesDrop(now);
  }

  /** A borrower that did not run gives its token back (a call that passed at once took none). */
  refund(slotAt: number, takenAt: number, acquireCount: number): void {
    if (!(slotAt > takenAt)) return;
    const bucketMs = this.bucketMs;
    const taken = this.ledger.get(Math.floor(takenAt / bucketMs));
    const landing = this.ledger.get(Math.floor(slotAt / bucketMs));
    if (taken !== undefined) taken.recorded -= acquireCount;
    if (landing !== undefined) landing.landing -= acquireCount;
  }

  private recorded(bucket: number): number {
    return this.ledger.get(bucket)?.recorded ?? 0;
  }

  private landing(bucket: number): number {
    return this.ledger.get(bucket)?.landing ?? 0;
  }

  private entry(bucket: number): BucketLedger {
    let ledger = this.ledger.get(bucket);
    if (ledger === undefined) {
      ledger = { recorded: 0, landing: 0 };
      this.ledger.set(bucket, ledger);
      if (bucket < this.oldest) this.oldest = bucket;
    }
    return ledger;
  }

  /** Drops the buckets no window read at bucket `cur` or later holds. */
  private prune(cur: number): void {
    if (this.oldest >= cur - 1) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const bucket of this.ledger.keys()) {
      if (bucket < cur - 1) this.ledger.delete(bucket);
      else if (bucket < oldest) oldest = bucket;
    }
    this.oldest = oldest;
  }
}
