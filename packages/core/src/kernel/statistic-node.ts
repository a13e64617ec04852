import { LeapArray } from './leap-array';

const PASS = 0;
const BLOCK = 1;
const SUCCESS = 2;
const ERROR = 3;
const RT = 4;
const MIN_RT = 5;
const FIELDS = 6;
const RESET = Object.freeze([0, 0, 0, 0, 0, Number.POSITIVE_INFINITY]);

/**
 * Upper bounds (inclusive, in ms) of the response-time histogram every resource keeps, a 1-2-5
 * series from 0.5 ms to 60 s; the last bucket counts everything slower. Exporters map their own
 * buckets onto these.
 */
export const RT_BUCKET_BOUNDS_MS: readonly number[] = Object.freeze([
  0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000,
]);
/**
 * The bounds as the exit path reads them: a frozen array keeps its numbers boxed, and V8 reads
 * its elements through a generic keyed load on every exit, where a typed array's are read inline.
 */
const RT_BOUNDS = Float64Array.from(RT_BUCKET_BOUNDS_MS);

/** Counters over one window, as {@link ResourceStats} reports them. */
export interface WindowStats {
  /** Calls that passed every check. */
  readonly pass: number;
  /** Calls that were blocked. */
  readonly block: number;
  /** Calls that exited (with or without an error). */
  readonly success: number;
  /** Calls that exited with a traced business error. */
  readonly error: number;
  /** Sum of the response times of exited calls, in ms. */
  readonly totalRtMs: number;
  /** Mean response time of exited calls in ms (0 when none). */
  readonly avgRtMs: number;
  /** Least response time of an exited call in ms (0 when none). */
  readonly minRtMs: number;
}

/** One completed second of a resource's minute-level window, from `Floodgate.history()`. */
export interface SecondStats extends WindowStats {
  /** When the second started, in the engine clock's ms. */
  readonly startMs: number;
}

/** A snapshot of one resource's statistics, from `Floodgate.stats()`. */
export interface ResourceStats {
  /** The resource's name (`'(inbound)'` for `inboundStats()`). */
  readonly resource: string;
  /** Calls in flight now. */
  readonly concurrency: number;
  /** The second-level window (2 × 500 ms) that rules check against. */
  readonly lastSecond: WindowStats;
  /** The minute-level window (60 × 1 s), for metrics. */
  readonly lastMinute: WindowStats;
}

/**
 * Counters that only grow, since the resource was first seen: what metric exporters read.
 * `cancel` counts calls admitted and then given back before they ran (refused by a later check of
 * the same request, or abandoned in a queue); they are in `pass` too.
 */
export interface ResourceTotals {
  /** Calls admitted. */
  readonly pass: number;
  /** Calls refused. */
  readonly block: number;
  /** Calls admitted and then given back before they ran (counted in `pass` too). */
  readonly cancel: number;
  /** Calls that exited (with or without an error). */
  readonly success: number;
  /** Calls that exited with a traced error (timeouts included). */
  readonly error: number;
  /** Calls that exited by their `timeoutMs`. */
  readonly timeout: number;
  /** Sum of the response times of exited calls, in ms. */
  readonly rtSumMs: number;
  /**
   * Exited calls per response-time bucket: `rtBuckets[i]` counts calls of at most
   * `RT_BUCKET_BOUNDS_MS[i]` ms and more than the bound before; the last counts the slower ones.
   */
  readonly rtBuckets: readonly number[];
}

/**
 * The second-level window of a {@link StatisticNode} summed in one pass, for a reader of several
 * sums per call (system protection reads passes and the mean response time on every inbound
 * call): one walk over the buckets for the three fields, instead of one walk per field.
 */
export class WindowSums {
  /** Passed calls in the window, as {@link StatisticNode.passQps}. */
  pass = 0;
  /** Calls completed in the window. */
  done = 0;
  /** Their response times, summed. */
  rtMs = 0;

  /** Sums `node`'s second-level window at `now`; returns this, to read. */
  read(node: StatisticNode, now: number): this {
    const window = node.second;
    window.offset(now);
    const data = window.data;
    let pass = 0;
    let done = 0;
    let rtMs = 0;
    for (let i = 0; i < window.sampleCount; i++) {
      if (!window.counts(i, now)) continue;
      const at = i * FIELDS;
      pass += data[at + PASS]!;
      done += data[at + SUCCESS]!;
      rtMs += data[at + RT]!;
    }
    this.pass = pass;
    this.done = done;
    this.rtMs = rtMs;
    return this;
  }

  /** Mean response time of the calls completed in the window (0 when none). */
  get avgRtMs(): number {
    return this.done > 0 ? this.rtMs / this.done : 0;
  }
}

/**
 * Statistics of one resource (or one origin of a resource, or every inbound call): a
 * second-level window of 2 × 500 ms for checks, a minute-level window of 60 × 1 s for metrics,
 * the number of calls in flight, and (for resources) totals that only grow. Sentinel's
 * StatisticNode.
 */
export class StatisticNode {
  /** 2 buckets of 500 ms, as Sentinel's `SampleCountProperty` and `IntervalProperty`. */
  readonly second = new LeapArray(2, 1000, FIELDS, RESET);
  /**
   * Buckets of 1 s: 60 (the minute window, for metrics) on full nodes; 2 on per-origin nodes,
   * which keep only what checks read (the previous second, for warm-up).
   */
  readonly minute: LeapArray;
  /** Calls in flight. */
  concurrency = 0;
  /** Growing counters; `undefined` on per-origin nodes. */
  private readonly totals: Float64Array | undefined;

  /**
   * @param scope - `'resource'`: the minute window and the totals; `'inbound'` (every inbound
   * call, read by system protection): the minute window only; `'origin'`: what checks read only.
   */
  constructor(scope: 'resource' | 'inbound' | 'origin' = 'resource') {
    this.minute = scope === 'origin' ? new LeapArray(2, 2000, FIELDS, RESET) : new LeapArray(60, 60_000, FIELDS, RESET);
    this.totals = scope === 'resource' ? new Float64Array(TOTAL_FIELDS) : undefined;
  }

  /** Records `count` passed calls. */
  addPass(now: number, count: number): void {
    this.second.data[this.second.offset(now) + PASS]! += count;
    this.minute.data[this.minute.offset(now) + PASS]! += count;
    if (this.totals !== undefined) this.totals[T_PASS]! += count;
  }

  /** Undoes {@link StatisticNode.addPass} made at `at`: the call was given back before it ran. */
  cancelPass(at: number, count: number): void {
    this.second.subtract(at, PASS, count);
    this.minute.subtract(at, PASS, count);
    if (this.totals !== undefined) this.totals[T_CANCEL]! += count;
  }

  /** Records `count` blocked calls. */
  addBlock(now: number, count: number): void {
    this.second.data[this.second.offset(now) + BLOCK]! += count;
    this.minute.data[this.minute.offset(now) + BLOCK]! += count;
    if (this.totals !== undefined) this.totals[T_BLOCK]! += count;
  }

  /** Records an exited call: its response time, and whether it carried an error (or timed out). */
  addExit(now: number, count: number, rtMs: number, error: boolean, timedOut: boolean): void {
    record(this.second, now, count, rtMs, error);
    record(this.minute, now, count, rtMs, error);
    const totals = this.totals;
    if (totals === undefined) return;
    totals[T_SUCCESS]! += count;
    totals[T_RT]! += rtMs;
    if (error) totals[T_ERROR]! += count;
    if (timedOut) totals[T_TIMEOUT]! += count;
    let b = 0;
    while (b < RT_BOUNDS.length && rtMs > RT_BOUNDS[b]!) b++;
    totals[T_BUCKETS + b]! += 1;
  }

  /** Passed calls in the second-level window. */
  passQps(now: number): number {
    return this.second.sum(now, PASS);
  }

  /** Least response time of a call completed in the second-level window (`Infinity` when none). */
  minRtMs(now: number): number {
    return this.second.min(now, MIN_RT);
  }

  /**
   * The most calls completed in one bucket of the minute-level window, per second: the highest
   * throughput seen lately (Sentinel's `StatisticNode.maxSuccessQps`, read by the BBR check).
   */
  maxSuccessQps(now: number): number {
    return (this.minute.max(now, SUCCESS) * 1000) / this.minute.windowLengthMs;
  }

  /** Passed calls in the bucket of the second-level window before the one holding `now` (prioritized flow rules). */
  previousBucketPasses(now: number): number {
    return this.second.previous(now, PASS);
  }

  /** Passed calls in the previous whole second (used by warm-up). */
  previousPassQps(now: number): number {
    return this.minute.previous(now, PASS);
  }

  /**
   * Milliseconds until the oldest bucket with passes leaves the second-level window, so the
   * passed count can drop; `undefined` when the window holds no passes.
   */
  msUntilPassesDrop(now: number): number | undefined {
    const start = this.second.oldestStartWith(now, PASS);
    return start === undefined ? undefined : Math.max(0, start + this.second.intervalMs - now);
  }

  /** The minute window's completed seconds that started at or after `sinceMs`, oldest first. */
  completedSeconds(now: number, sinceMs: number): SecondStats[] {
    const minute = this.minute;
    return minute.completedSince(now, sinceMs).map((index) => {
      const at = index * FIELDS;
      const data = minute.data;
      const success = data[at + SUCCESS]!;
      const totalRtMs = data[at + RT]!;
      const minRtMs = data[at + MIN_RT]!;
      return {
        startMs: minute.startOf(index),
        pass: data[at + PASS]!,
        block: data[at + BLOCK]!,
        success,
        error: data[at + ERROR]!,
        totalRtMs,
        avgRtMs: success > 0 ? totalRtMs / success : 0,
        minRtMs: Number.isFinite(minRtMs) ? minRtMs : 0,
      };
    });
  }

  /** A snapshot of the counters. */
  snapshot(resource: string, now: number): ResourceStats {
    return {
      resource,
      concurrency: this.concurrency,
      lastSecond: windowStats(this.second, now),
      lastMinute: windowStats(this.minute, now),
    };
  }

  /** The growing counters (zeros on per-origin nodes). */
  readTotals(): ResourceTotals {
    const t = this.totals ?? new Float64Array(TOTAL_FIELDS);
    return {
      pass: t[T_PASS]!,
      block: t[T_BLOCK]!,
      cancel: t[T_CANCEL]!,
      success: t[T_SUCCESS]!,
      error: t[T_ERROR]!,
      timeout: t[T_TIMEOUT]!,
      rtSumMs: t[T_RT]!,
      rtBuckets: Array.from(t.subarray(T_BUCKETS)),
    };
  }
}

const T_PASS = 0;
const T_BLOCK = 1;
const T_CANCEL = 2;
const T_SUCCESS = 3;
const T_ERROR = 4;
const T_TIMEOUT = 5;
const T_RT = 6;
const T_BUCKETS = 7;
const TOTAL_FIELDS = T_BUCKETS + RT_BUCKET_BOUNDS_MS.length + 1;

function record(window: LeapArray, now: number, count: number, rtMs: number, error: boolean): void {
  const data = window.data;
  const at = window.offset(now);
  data[at + SUCCESS]! += count;
  data[at + RT]! += rtMs;
  if (rtMs < data[at + MIN_RT]!) data[at + MIN_RT] = rtMs;
  if (error) data[at + ERROR]! += count;
}

function windowStats(window: LeapArray, now: number): WindowStats {
  const success = window.sum(now, SUCCESS);
  const totalRtMs = window.sum(now, RT);
  const minRtMs = window.min(now, MIN_RT);
  return {
    pass: window.sum(now, PASS),
    block: window.sum(now, BLOCK),
    success,
    error: window.sum(now, ERROR),
    totalRtMs,
    avgRtMs: success > 0 ? totalRtMs / success : 0,
    minRtMs: Number.isFinite(minRtMs) ? minRtMs : 0,
  };
}
