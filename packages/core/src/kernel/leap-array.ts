/**
 * A sliding window of fixed buckets (Sentinel's LeapArray). Each bucket holds `fields`
 * numbers in one `Float64Array`; buckets rotate lazily when time reaches them, so there are
 * no timers. A bucket counts in reads while `now - bucketStart <= intervalMs`.
 */
export class LeapArray {
  /** Length of one bucket in ms: `intervalMs / sampleCount`. */
  readonly windowLengthMs: number;
  /** The bucket values, `fields` numbers per bucket. Write through {@link LeapArray.offset}. */
  readonly data: Float64Array;
  private readonly starts: Float64Array;
  /**
   * The bucket the last write or read landed in: while time stays within it, `offset()` is two
   * compares (most calls in a busy second land in the same 500 ms bucket).
   */
  private currentStart = Number.NaN;
  private currentEnd = Number.NaN;
  private currentOffset = 0;

  /**
   * @param sampleCount - number of buckets
   * @param intervalMs - total window length
   * @param fields - numbers kept per bucket
   * @param resetValues - the value each field starts at when a bucket rotates (0 if absent)
   */
  constructor(
    readonly sampleCount: number,
    readonly intervalMs: number,
    readonly fields: number,
    private readonly resetValues?: readonly number[],
  ) {
    this.windowLengthMs = intervalMs / sampleCount;
    this.data = new Float64Array(sampleCount * fields);
    this.starts = new Float64Array(sampleCount).fill(Number.NaN);
  }

  /** Offset into {@link LeapArray.data} of the bucket that holds `now`, rotated if stale. */
  offset(now: number): number {
    if (now >= this.currentStart && now < this.currentEnd) return this.currentOffset;
    const n = Math.floor(now / this.windowLengthMs);
    const idx = n % this.sampleCount;
    const start = n * this.windowLengthMs;
    if (this.starts[idx] !== start) this.rotate(idx, start);
    this.currentStart = start;
    this.currentEnd = start + this.windowLengthMs;
    this.currentOffset = idx * this.fields;
    return this.currentOffset;
  }

  /** Adds `value` to `field` of the current bucket. */
  add(now: number, field: number, value: number): void {
    this.data[this.offset(now) + field]! += value;
  }

  /**
   * Subtracts `value` from `field` of the bucket that held `at`, if that bucket has not rotated
   * since (an undo of {@link LeapArray.add} at `at`; a bucket gone stale needs no undo).
   */
  subtract(at: number, field: number, value: number): void {
    const n = Math.floor(at / this.windowLengthMs);
    const idx = n % this.sampleCount;
    if (this.starts[idx] === n * this.windowLengthMs) this.data[idx * this.fields + field]! -= value;
  }

  /**
   * Whether bucket `index` counts in reads at `now`: `now - bucketStart <= intervalMs`. For
   * readers that walk the buckets themselves, after {@link LeapArray.offset} rotated them.
   */
  counts(index: number, now: number): boolean {
    const start = this.starts[index]!;
    return start >= now - this.intervalMs && start <= now;
  }

  /** Sum of `field` over the buckets in the window at `now`. */
  sum(now: number, field: number): number {
    this.offset(now);
    let total = 0;
    for (let i = 0; i < this.sampleCount; i++) if (this.counts(i, now)) total += this.data[i * this.fields + field]!;
    return total;
  }

  /** Sums every field over the buckets in the window at `now`, in one pass, into `out`. */
  sumAll(now: number, out: Float64Array): void {
    this.offset(now);
    this.sumAllRotated(now, out);
  }

  /**
   * {@link LeapArray.sumAll} for a caller that has just called {@link LeapArray.offset} at
   * `now` (a write then a read at the same instant finds the bucket once).
   */
  sumAllRotated(now: number, out: Float64Array): void {
    const fields = this.fields;
    const data = this.data;
    if (this.sampleCount === 1) {
      // One bucket: rotated to `now`, it is the whole window (no bucket to sum, none to test).
      for (let f = 0; f < fields; f++) out[f] = data[f]!;
      return;
    }
    // A loop, not `out.fill(0)`: fill is a runtime call that costs more than the sums on a hot path.
    for (let f = 0; f < fields; f++) out[f] = 0;
    for (let i = 0; i < this.sampleCount; i++) {
      if (!this.counts(i, now)) continue;
      const base = i * fields;
      for (let f = 0; f < fields; f++) out[f]! += data[base + f]!;
    }
  }

  /** Minimum of `field` over the buckets in the window at `now` (`Infinity` when empty). */
  min(now: number, field: number): number {
    this.offset(now);
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.sampleCount; i++)
      if (this.counts(i, now)) least = Math.min(least, this.data[i * this.fields + field]!);
    return least;
  }

  /** Maximum of `field` over the buckets in the window at `now` (0 when empty). */
  max(now: number, field: number): number {
    this.offset(now);
    let most = 0;
    for (let i = 0; i < this.sampleCount; i++)
      if (this.counts(i, now)) most = Math.max(most, this.data[i * this.fields + field]!);
    return most;
  }

  /** `field` of the bucket just before the one holding `now` (0 if that bucket is stale). */
  previous(now: number, field: number): number {
    const n = Math.floor(now / this.windowLengthMs) - 1;
    const idx = ((n % this.sampleCount) + this.sampleCount) % this.sampleCount;
    return this.starts[idx] === n * this.windowLengthMs ? this.data[idx * this.fields + field]! : 0;
  }

  /**
   * Start time of the oldest bucket in the window at `now` whose `field` is non-zero, or
   * `undefined`. That bucket leaves the window at `start + intervalMs`.
   */
  oldestStartWith(now: number, field: number): number | undefined {
    this.offset(now);
    let found: number | undefined;
    for (let i = 0; i < this.sampleCount; i++) {
      const start = this.starts[i]!;
      if (this.counts(i, now) && this.data[i * this.fields + field] !== 0 && (found === undefined || start < found))
        found = start;
    }
    return found;
  }

  /**
   * Indexes of the buckets in the window at `now` that are complete (ended by `now`) and
   * started at or after `sinceMs`, oldest first. Read-only: rotates nothing.
   */
  completedSince(now: number, sinceMs: number): number[] {
    const from = Math.max(sinceMs, now - this.intervalMs);
    const found: number[] = [];
    for (let i = 0; i < this.sampleCount; i++) {
      const start = this.starts[i]!;
      if (start >= from && start + this.windowLengthMs <= now) found.push(i);
    }
    return found.sort((a, b) => this.starts[a]! - this.starts[b]!);
  }

  /** Start time of bucket `index` (`NaN` if it never held data). */
  startOf(index: number): number {
    return this.starts[index]!;
  }

  /** Empties every bucket. */
  reset(): void {
    this.starts.fill(Number.NaN);
    this.data.fill(0);
    this.currentStart = Number.NaN;
    this.currentEnd = Number.NaN;
  }

  private rotate(idx: number, start: number): void {
    this.starts[idx] = start;
    const base = idx * this.fields;
    for (let f = 0; f < this.fields; f++) this.data[base + f] = this.resetValues?.[f] ?? 0;
  }
}
