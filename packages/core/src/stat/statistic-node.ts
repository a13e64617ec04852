import { LeapArray } from './leap-array';

const PASS = 0;
const BLOCK = 1;
const SUCCESS = 2;
const ERROR = 3;
const RT = 4;
const MIN_RT = 5;
const FIELDS = 6;
const RESET = Object.freeze([0, 0, 0, 0, 0, Number.POSITIVE_INFINITY]);

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

/** A snapshot of one resource's statistics, from `Floodgate.stats()`. */
export interface ResourceStats {
  readonly resource: string;
  /** Calls in flight now. */
  readonly concurrency: number;
  /** The second-level window (2 × 500 ms) that rules check against. */
  readonly lastSecond: WindowStats;
  /** The minute-level window (60 × 1 s), for metrics. */
  readonly lastMinute: WindowStats;
}

/**
 * Statistics of one resource (or one origin of a resource): a second-level window of
 * 2 × 500 ms for checks, a minute-level window of 60 × 1 s for metrics, and the number of calls
 * in flight. Sentinel's StatisticNode.
 */
export class StatisticNode {
  /** 2 buckets of 500 ms, as Sentinel's `SampleCountProperty` and `IntervalProperty`. */
  readonly second = new LeapArray(2, 1000, FIELDS, RESET);
  /** 60 buckets of 1 s. */
  readonly minute = new LeapArray(60, 60_000, FIELDS, RESET);
  /** Calls in flight. */
  concurrency = 0;

  /** Records `count` passed calls. */
  addPass(now: number, count: number): void {
    this.second.data[this.second.offset(now) + PASS]! += count;
    this.minute.data[this.minute.offset(now) + PASS]! += count;
  }

  /** Records `count` blocked calls. */
  addBlock(now: number, count: number): void {
    this.second.data[this.second.offset(now) + BLOCK]! += count;
    this.minute.data[this.minute.offset(now) + BLOCK]! += count;
  }

  /** Records an exited call: its response time, and whether it carried an error. */
  addExit(now: number, count: number, rtMs: number, error: boolean): void {
    record(this.second, now, count, rtMs, error);
    record(this.minute, now, count, rtMs, error);
  }

  /** Passed calls in the second-level window. */
  passQps(now: number): number {
    return this.second.sum(now, PASS);
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

  /** A snapshot of the counters. */
  snapshot(resource: string, now: number): ResourceStats {
    return {
      resource,
      concurrency: this.concurrency,
      lastSecond: windowStats(this.second, now),
      lastMinute: windowStats(this.minute, now),
    };
  }
}

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
