import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

/** The process's load, as system protection reads it. Every field is a finite number >= 0. */
export interface SystemSignals {
  /** Recent event-loop delay in ms: the p99 over the last sample window, less the timer's resolution. */
  readonly eventLoopDelayMs: number;
  /** Share of the last sample window the event loop was busy, 0–1. */
  readonly eventLoopUtilization: number;
  /** The process's CPU time over the last sample window, as a share of one core, 0–1 (capped). */
  readonly cpuUsage: number;
  /** V8 heap in use, in bytes. */
  readonly heapUsedBytes: number;
  /** Resident set size of the process, in bytes. */
  readonly rssBytes: number;
}

/**
 * Where system protection's signals come from, as time comes from the `Clock`: the engine's
 * `probe` option. Tests pass a `ManualProbe` and set the signals; the default,
 * `processProbe`, samples the process with `perf_hooks`.
 */
export interface SystemProbe {
  /**
   * The latest signals. Read on every inbound check while a system rule that needs them is in
   * force, so it must be cheap (the default returns what its last sample stored).
   */
  read(): SystemSignals;
  /**
   * Asks the probe to sample: a system rule that reads signals came into force. Returns the
   * function that withdraws the request (when that rule leaves). The probe samples while any
   * request stands; calling the returned function twice is harmless.
   */
  start(): () => void;
}

/** Options of a {@link ProcessProbe}. */
export interface ProcessProbeOptions {
  /** How often the signals are sampled, in ms: the window delay, utilisation and CPU are taken over. @defaultValue 500 */
  readonly sampleIntervalMs?: number;
  /** The event-loop delay timer's resolution, in ms (`monitorEventLoopDelay`). @defaultValue 10 */
  readonly resolutionMs?: number;
}

/** Defaults of a {@link ProcessProbe}. */
export const PROCESS_PROBE_DEFAULTS = Object.freeze({
  /** One sample per bucket of the second-level window (2 × 500 ms). */
  sampleIntervalMs: 500,
  /** @fastify/under-pressure's default `resolution`. */
  resolutionMs: 10,
} as const);

const IDLE: SystemSignals = Object.freeze({
  eventLoopDelayMs: 0,
  eventLoopUtilization: 0,
  cpuUsage: 0,
  heapUsedBytes: 0,
  rssBytes: 0,
});

/**
 * The default probe: samples the process every `sampleIntervalMs` on one unref'd timer, which
 * runs only while a system rule needs it (between the first `start()` and the last stop), so
 * an engine without system rules costs nothing and a probe never keeps the process alive.
 * Each sample takes the p99 of `monitorEventLoopDelay` (less its resolution, as
 * @fastify/under-pressure does) and `performance.eventLoopUtilization()` over the window, the
 * process's `process.cpuUsage()` over the window's wall time (a share of one core: JavaScript
 * runs on one thread, so that is what saturates), and `process.memoryUsage()`.
 */
export class ProcessProbe implements SystemProbe {
  private signals: SystemSignals = IDLE;
  private users = 0;
  private readonly intervalMs: number;
  private readonly resolutionMs: number;
  private timer: NodeJS.Timeout | undefined;
  private histogram: IntervalHistogram | undefined;
  private lastElu: EventLoopUtilization | undefined;
  private lastCpu: NodeJS.CpuUsage | undefined;
  private lastAt = 0;

  /** @throws RangeError when an option is out of range. */
  constructor(options: ProcessProbeOptions = {}) {
    this.intervalMs = options.sampleIntervalMs ?? PROCESS_PROBE_DEFAULTS.sampleIntervalMs;
    this.resolutionMs = options.resolutionMs ?? PROCESS_PROBE_DEFAULTS.resolutionMs;
    if (!Number.isSafeInteger(this.intervalMs) || this.intervalMs < 10 || this.intervalMs > 60_000) {
      throw new RangeError(
        `sampleIntervalMs must be an integer within [10, 60000], got ${String(options.sampleIntervalMs)}`,
      );
    }
    if (!Number.isSafeInteger(this.resolutionMs) || this.resolutionMs < 1 || this.resolutionMs >= this.intervalMs) {
      throw new RangeError(
        `resolutionMs must be an integer >= 1 and below sampleIntervalMs, got ${String(options.resolutionMs)}`,
      );
    }
  }

  /** Whether the probe is sampling (some system rule needs it). */
  get sampling(): boolean {
    return this.users > 0;
  }

  /** What the last sample stored (every signal 0 while not sampling). */
  read(): SystemSignals {
    return this.signals;
  }

  /** Starts sampling, unless it already is; returns the function that withdraws this request. */
  start(): () => void {
    if (this.users++ === 0) this.begin();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      if (--this.users === 0) this.end();
    };
  }

  private begin(): void {
    const histogram = monitorEventLoopDelay({ resolution: this.resolutionMs });
    histogram.enable();
    this.histogram = histogram;
    this.lastElu = performance.eventLoopUtilization();
    this.lastCpu = process.cpuUsage();
    this.lastAt = performance.now();
    const memory = process.memoryUsage();
    this.signals = Object.freeze({ ...IDLE, heapUsedBytes: memory.heapUsed, rssBytes: memory.rss });
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  private end(): void {
    clearInterval(this.timer);
    this.histogram?.disable();
    this.timer = undefined;
    this.histogram = undefined;
    this.signals = IDLE;
  }

  /** Takes a sample now (the timer does, every `sampleIntervalMs`); does nothing while not sampling. */
  sample(): void {
    const histogram = this.histogram;
    if (histogram === undefined) return;
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const spentMs = (cpu.user - this.lastCpu!.user + cpu.system - this.lastCpu!.system) / 1000;
    const elapsedMs = now - this.lastAt;
    const delayMs = histogram.count > 0 ? Math.max(0, histogram.percentile(99) / 1e6 - this.resolutionMs) : 0;
    const utilization = performance.eventLoopUtilization(elu, this.lastElu).utilization;
    this.signals = Object.freeze({
      eventLoopDelayMs: delayMs,
      eventLoopUtilization: Number.isFinite(utilization) ? utilization : 0,
      cpuUsage: elapsedMs > 0 ? Math.min(1, Math.max(0, spentMs / elapsedMs)) : 0,
      heapUsedBytes: memory.heapUsed,
      rssBytes: memory.rss,
    });
    histogram.reset();
    this.lastElu = elu;
    this.lastCpu = cpu;
    this.lastAt = now;
  }
}

/** The process's probe, shared by every engine that is given none (the signals are the process's). */
export const processProbe: ProcessProbe = new ProcessProbe();
