import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { monotonicClock, type Clock } from './clock';

/*
 * A clock that, under load, reads a millisecond a worker thread keeps current, as Sentinel's
 * `TimeUtil` does: a `performance.now()` costs a call into Node and a `clock_gettime` (tens of
 * nanoseconds, about two thirds of a guarded call's own work), a value in shared memory a few.
 * Idle, it is `performance.now()` and no thread runs: it ticks only while reads come faster than
 * `tickAboveReadsPerSecond`, and stops below `idleBelowReadsPerSecond` (or when reads stop).
 */

/** A {@link Clock} that reads a ticked millisecond under load (see {@link tickingClock}). */
export interface TickingClock extends Clock {
  /**
   * Reads per second, over a quarter of a second, above which the worker ticks (and the
   * worker thread is started, the first time).
   * @defaultValue 100_000
   */
  readonly tickAboveReadsPerSecond: number;
  /**
   * Reads per second below which it stops ticking; reads are then `performance.now()` again.
   * At most `tickAboveReadsPerSecond`.
   * @defaultValue 50_000
   */
  readonly idleBelowReadsPerSecond: number;
  /** Whether reads currently return the worker's tick (`false`: `performance.now()`). */
  readonly ticking: boolean;
  /** Stops the worker thread, if started; reads are `performance.now()` from then on. */
  close(): Promise<void>;
}

/** The thresholds of a {@link TickingClock}. */
type Thresholds = Pick<TickingClock, 'tickAboveReadsPerSecond' | 'idleBelowReadsPerSecond'>;

/** The thresholds of a {@link tickingClock} given none. */
export const TICKING_CLOCK_DEFAULTS: Thresholds = Object.freeze({
  tickAboveReadsPerSecond: 100_000,
  idleBelowReadsPerSecond: 50_000,
});

/** How often the read rate is judged, in ms (on a read: there is no timer). */
export const TICK_CHECK_MS = 250;

/** The modes, in the shared `MODE` cell. */
const IDLE = 0;
/** Asked to tick: reads stay precise until the worker has written a time (it may still be starting). */
const WANTED = 1;
const TICKING = 2;
const CLOSED = 3;
/** Int32 cells: the mode; Float64 cells (after them): the ticked time, the time of the last check. */
const MODE = 0;
const TICK_AT = 1;
const CHECKED_AT = 2;

/**
 * What the worker runs (plain JavaScript, in its own thread). Asked to tick, it writes the time
 * (on the main thread's time scale) and only then says it ticks, so no read returns a time written
 * before the thread ran; then it writes the time about every millisecond, and goes idle itself when the main
 * thread has not judged the rate for two check periods (its reads stopped); idle, it waits on the
 * mode cell, using no CPU, until the main thread wakes it.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { buffer, offset, checkMs } = workerData;
const mode = new Int32Array(buffer, 0, 2);
const times = new Float64Array(buffer, 8, 3);
for (;;) {
  const now = Atomics.load(mode, ${MODE});
  if (now === ${CLOSED}) break;
  if (now === ${IDLE}) { Atomics.wait(mode, ${MODE}, now); continue; }
  const [seconds, nanoseconds] = process.hrtime();
  const at = seconds * 1000 + nanoseconds / 1e6 + offset;
  if (now === ${WANTED}) { times[${TICK_AT}] = at; Atomics.compareExchange(mode, ${MODE}, ${WANTED}, ${TICKING}); continue; }
  times[${TICK_AT}] = at;
  if (at - times[${CHECKED_AT}] > 2 * checkMs) Atomics.compareExchange(mode, ${MODE}, ${TICKING}, ${IDLE});
  else Atomics.wait(mode, ${MODE}, ${TICKING}, 1);
}
`;

/**
 * Whether to tick after a check period of `reads` reads in `elapsedMs`: start above `tickAbove`
 * reads per second, stop below `idleBelow`, and between them stay as it was.
 * @internal
 */
export function shouldTick(ticking: boolean, reads: number, elapsedMs: number, options: Thresholds): boolean {
  const perSecond = elapsedMs > 0 ? (reads * 1000) / elapsedMs : Number.POSITIVE_INFINITY;
  if (ticking) return !(perSecond < options.idleBelowReadsPerSecond);
  return perSecond > options.tickAboveReadsPerSecond;
}

/**
 * A clock for processes whose event loop is the bottleneck and that have a core to spare: under
 * load, `now()` returns a time a worker thread writes about every millisecond, so a guarded call
 * does not pay two `performance.now()` calls. Pass it to the engine: `new Floodgate({ clock:
 * tickingClock() })`.
 *
 * What it trades:
 * - **Precision, while ticking.** Times are up to about a millisecond behind (more if the worker
 *   thread is descheduled), so a response time is a whole number of ticks: a call shorter than a
 *   millisecond reads 0 or 1 ms. Averages over many calls (the adaptive concurrency limit's
 *   round-trip times, average response times) stay unbiased; a single call's time against a
 *   `maxAllowedRtMs` threshold, and histograms below a few milliseconds, are coarse. Sentinel's
 *   statistics have the same millisecond resolution. Idle, times are `performance.now()`.
 * - **A thread, while ticking.** About 4–7 % of a core on the worker thread (measured: 40–66 ms of
 *   CPU per second); none idle, when the thread waits on shared memory. The thread (a worker with
 *   its own V8 heap: about 12 MB of resident memory) is started the
 *   first time the reads pass `tickAboveReadsPerSecond`, and does not keep the process alive.
 *
 * Times never go backwards. Waits (`sleep`, `schedule`) are the default clock's timers. Where
 * worker threads cannot start, it stays `performance.now()`.
 */
export function tickingClock(
  options: Partial<Pick<TickingClock, 'tickAboveReadsPerSecond' | 'idleBelowReadsPerSecond'>> = {},
): TickingClock {
  return new WorkerTickedClock(checkOptions(options));
}

function checkOptions(options: Partial<Thresholds>): Thresholds {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`tickingClock options must be an object, got ${String(options)}`);
  }
  const resolved = { ...TICKING_CLOCK_DEFAULTS, ...options };
  for (const key of ['tickAboveReadsPerSecond', 'idleBelowReadsPerSecond'] as const) {
    const value = resolved[key];
    if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
      throw new RangeError(`tickingClock: ${key} must be a finite number >= 0, got ${String(value)}`);
    }
  }
  if (resolved.idleBelowReadsPerSecond > resolved.tickAboveReadsPerSecond) {
    throw new RangeError(
      `tickingClock: idleBelowReadsPerSecond (${resolved.idleBelowReadsPerSecond}) must be at most ` +
        `tickAboveReadsPerSecond (${resolved.tickAboveReadsPerSecond})`,
    );
  }
  return resolved;
}

class WorkerTickedClock implements TickingClock {
  private readonly buffer = new SharedArrayBuffer(32);
  private readonly mode = new Int32Array(this.buffer, 0, 2);
  private readonly times = new Float64Array(this.buffer, 8, 3);
  private worker: Worker | undefined;
  /** Reads since `periodStart`. */
  private reads = 0;
  private periodStart = performance.now();
  /** The latest time returned: a tick older than a precise read before it is not returned. */
  private latest = 0;

  readonly tickAboveReadsPerSecond: number;
  readonly idleBelowReadsPerSecond: number;

  constructor(thresholds: Thresholds) {
    this.tickAboveReadsPerSecond = thresholds.tickAboveReadsPerSecond;
    this.idleBelowReadsPerSecond = thresholds.idleBelowReadsPerSecond;
    this.times[CHECKED_AT] = this.periodStart;
  }

  get ticking(): boolean {
    return Atomics.load(this.mode, MODE) === TICKING;
  }

  now(): number {
    this.reads++;
    let at: number;
    // Plain reads (an atomic one costs more than the read saves): a tick read out of order (older
    // than the worker's write before it said it ticks) is older than the precise time returned
    // before it, which is then returned instead.
    if (this.mode[MODE] === TICKING) {
      at = this.times[TICK_AT]!;
      if (at < this.latest) at = this.latest;
    } else at = performance.now();
    this.latest = at;
    if (at - this.periodStart >= TICK_CHECK_MS) this.check(at);
    return at;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return monotonicClock.sleep(ms, signal);
  }

  schedule(ms: number, fire: () => void): () => void {
    return monotonicClock.schedule(ms, fire);
  }

  async close(): Promise<void> {
    Atomics.store(this.mode, MODE, CLOSED);
    Atomics.notify(this.mode, MODE);
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  /** Judges the rate of the period ending `at`; starts or stops the ticks. */
  private check(at: number): void {
    const mode = Atomics.load(this.mode, MODE);
    const wanted = mode === TICKING || mode === WANTED;
    const tick = shouldTick(wanted, this.reads, at - this.periodStart, this);
    this.reads = 0;
    this.periodStart = at;
    this.times[CHECKED_AT] = at;
    if (mode === CLOSED || tick === wanted) return;
    if (!tick) {
      Atomics.compareExchange(this.mode, MODE, mode, IDLE);
      return;
    }
    if (this.worker === undefined && !this.start()) return;
    // The worker writes a time, then ticks; until then reads stay precise.
    Atomics.compareExchange(this.mode, MODE, IDLE, WANTED);
    Atomics.notify(this.mode, MODE);
  }

  /** Starts the worker thread; `false` (and closed, so reads stay precise) where it cannot. */
  private start(): boolean {
    try {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { buffer: this.buffer, offset: hrtimeToNow(), checkMs: TICK_CHECK_MS },
      });
      worker.unref();
      // A thread that fails or ends leaves the reads precise for good.
      const closed = (): void => {
        Atomics.store(this.mode, MODE, CLOSED);
      };
      worker.on('error', closed);
      worker.on('exit', closed);
      this.worker = worker;
      return true;
    } catch {
      Atomics.store(this.mode, MODE, CLOSED);
      return false;
    }
  }
}

/**
 * What to add to `process.hrtime()` in ms (one monotonic clock for every thread) to be on this
 * thread's `performance.now()` scale. The hrtime is read after the performance.now() it is paired
 * with, so a tick is never ahead of a `performance.now()` read after it.
 */
function hrtimeToNow(): number {
  const now = performance.now();
  const [seconds, nanoseconds] = process.hrtime();
  return now - (seconds * 1000 + nanoseconds / 1e6);
}
