import { LeapArray } from '../stat/leap-array';

const TOTAL = 0;
const SLOW = 1;
const ERROR = 2;
const FIELDS = 3;

/** What a breaker's window holds at one instant: the calls completed in it. */
export interface WindowCounts {
  /** Completed calls. */
  readonly total: number;
  /** Completed calls slower than the rule's `maxAllowedRtMs` (always 0 for other strategies). */
  readonly slow: number;
  /** Completed calls that carried a business error. */
  readonly error: number;
}

/**
 * One breaker's statistics: completed, slow and failed calls over `statIntervalMs`, in
 * `bucketCount` buckets of a {@link LeapArray} (one bucket, the default, is a tumbling window
 * as in Sentinel). Buckets rotate lazily against the `now` given; there are no timers.
 */
export class BreakerWindow {
  private readonly buckets: LeapArray;
  /** Reused by {@link BreakerWindow.counts}, so reading the window allocates nothing. */
  private readonly scratch = { total: 0, slow: 0, error: 0 };
  private readonly sums = new Float64Array(FIELDS);

  constructor(bucketCount: number, statIntervalMs: number) {
    this.buckets = new LeapArray(bucketCount, statIntervalMs, FIELDS);
  }

  /** Records one completed call. Each call counts once, whatever its `acquireCount` (as Sentinel). */
  record(now: number, slow: boolean, error: boolean): void {
    const data = this.buckets.data;
    const at = this.buckets.offset(now);
    data[at + TOTAL]! += 1;
    if (slow) data[at + SLOW]! += 1;
    if (error) data[at + ERROR]! += 1;
  }

  /**
   * The counts in the window at `now`. The returned object is the window's own and is
   * overwritten by the next call: read it, do not keep it.
   */
  counts(now: number): WindowCounts {
    const sums = this.sums;
    this.buckets.sumAll(now, sums);
    const scratch = this.scratch;
    scratch.total = sums[TOTAL]!;
    scratch.slow = sums[SLOW]!;
    scratch.error = sums[ERROR]!;
    return scratch;
  }

  /** Empties the window (on closing, as Sentinel's `resetStat`, but every bucket as Go). */
  reset(): void {
    this.buckets.reset();
  }
}
