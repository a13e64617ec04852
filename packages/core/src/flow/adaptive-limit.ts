import type { Entry, EntryAttachment } from '../kernel/entry';
import {
  factorsByIndex,
  PRIORITY_FACTORS_DEFAULTS,
  priorityIndex,
  type Priority,
  type PriorityFactors,
} from '../kernel/priority';
import type { StatisticNode } from '../kernel/statistic-node';
import { BLOCKED, PASS, type TrafficController } from './traffic-controllers';

/**
 * The constants of the adaptive concurrency algorithm: Envoy's gradient controller defaults
 * (`envoy.extensions.filters.http.adaptive_concurrency.v3.GradientControllerConfig`), with
 * Netflix concurrency-limits' least samples per window.
 */
export const ADAPTIVE_LIMIT_DEFAULTS = Object.freeze({
  /** How often the limit is recomputed, in ms: Envoy's `concurrency_update_interval` (100 ms). */
  windowMs: 100,
  /**
   * Completions a window needs before it counts: Netflix `WindowedLimit`'s `windowSize` (10). A
   * window with fewer stretches until it has them, so a quiet resource is not judged on noise.
   */
  minWindowSamples: 10,
  /** How often the no-load response time is measured again, in ms: Envoy's `min_rtt_calc_params.interval` (60 s). */
  minRttIntervalMs: 60_000,
  /** Completions the no-load measurement averages: Envoy's `min_rtt_calc_params.request_count` (50). */
  minRttSamples: 50,
  /** Latency allowed over the no-load response time before the limit shrinks: Envoy's `buffer` (25 %). */
  minRttBuffer: 0.25,
  /** Least and greatest change of the limit in one window: Envoy clamps the gradient to [0.5, 2]. */
  minGradient: 0.5,
  maxGradient: 2,
  /** Windows in a row at `minLimit` after which the no-load response time is measured again (Envoy: 5). */
  windowsAtMinBeforeRemeasure: 5,
} as const);

/**
 * `adaptive` concurrency: a limit on calls in flight that follows measured latency, for
 * `{ metric: 'concurrency', behavior: 'adaptive' }` flow rules. Envoy's adaptive concurrency
 * gradient controller (`source/extensions/filters/http/adaptive_concurrency/controller/
 * gradient_controller.cc`), fed by completions, with no timer:
 *
 * 1. **No-load response time (minRTT).** When the rule first sees a call, every
 *    `minRttIntervalMs` after, and after `windowsAtMinBeforeRemeasure` windows in a row at
 *    `minLimit`, the limit is pinned to `minLimit` until `minRttSamples` calls that started then
 *    have completed; their mean response time is the minRTT. The limit then returns to what it
 *    was (at first, the rule's `threshold`).
 * 2. **Gradient.** Every `windowMs` (once `minWindowSamples` calls completed in the window), with
 *    `sampleRtt` the window's mean response time:
 *    `gradient = clamp(minRtt × (1 + minRttBuffer) / sampleRtt, 0.5, 2)`,
 *    `limit = clamp(limit × gradient + √(limit × gradient), minLimit, maxLimit)`.
 *    While latency stays within the buffer of its minimum the limit grows (by √limit headroom,
 *    up to doubling); as calls queue and latency rises it shrinks (at most halving per window).
 * 3. **App-limited windows** (Netflix concurrency-limits, `Gradient2Limit`): a window whose
 *    calls in flight never reached half the limit leaves the limit as it is, so a quiet period
 *    does not grow it to `maxLimit`.
 *
 * Why measure the minimum rather than average it (Netflix's Gradient2): under steady overload a
 * long-term average drifts up with the queue it should detect, and the limit with it; a
 * measurement at `minLimit` sees the latency of an unloaded process, which for a CPU-bound Node
 * process (one thread: latency ≈ calls in flight × CPU per call) is what tells queueing from
 * work. Unlike Envoy, there is no smoothing and no jitter: one process, deterministic under a
 * `ManualClock`.
 *
 * 4. **Priorities.** A call is refused from `floor(limit × factor)` calls in flight, its
 *    priority's factor from the rule's `priorityFactors` (sheddable 0.8, default 1, critical 1.1
 *    by default): as latency rises and the limit shrinks, sheddable calls are refused first.
 */
export class AdaptiveLimit implements TrafficController, EntryAttachment {
  /** Told of each admitted call's end (the flow checker attaches it to the entry). */
  readonly completions: EntryAttachment = this;
  private estimate: number;
  private minRtt = Number.NaN;
  private measuring = true;
  /** When the current minRTT measurement started; `NaN` until the rule sees its first call. */
  private epoch = Number.NaN;
  /** The limit to return to after the measurement. */
  private deferred: number;
  private nextMeasureAt = Number.POSITIVE_INFINITY;
  private windowStart = Number.NaN;
  private samples = 0;
  private rtSum = 0;
  private maxInflight = 0;
  private windowsAtMin = 0;
  /** The limit's factor by priority index (critical, default, sheddable). */
  private readonly factors: readonly [number, number, number];

  constructor(
    initialLimit: number,
    private readonly minLimit: number,
    private readonly maxLimit: number,
    factors: PriorityFactors = PRIORITY_FACTORS_DEFAULTS,
  ) {
    this.estimate = initialLimit;
    this.deferred = initialLimit;
    this.factors = factorsByIndex(factors);
  }

  /** The limit in force: `minLimit` while the no-load response time is measured. */
  get limit(): number {
    return this.measuring ? this.minLimit : Math.floor(this.estimate);
  }

  /** The no-load response time last measured, in ms (`NaN` before the first measurement ends). */
  get minRttMs(): number {
    return this.minRtt;
  }

  /** Whether the no-load response time is being measured (the limit pinned at `minLimit`). */
  get measuringMinRtt(): boolean {
    return this.measuring;
  }

  /**
   * Passes while the calls in flight with this one stay within the limit scaled by the call's
   * priority: `floor(limit × factor)`, e.g. 8 of a limit of 10 for a sheddable call, 11 for a
   * critical one (default factors 0.8 and 1.1).
   */
  tryPass(
    node: StatisticNode,
    acquireCount: number,
    now: number,
    _canWait = false,
    priority: Priority = 'default',
  ): number {
    if (Number.isNaN(this.epoch)) this.epoch = now;
    else if (!this.measuring && now >= this.nextMeasureAt) this.startMeasuring(now);
    const inflight = node.concurrency + acquireCount;
    if (inflight > Math.floor(this.limit * this.factors[priorityIndex(priority)])) return BLOCKED;
    if (inflight > this.maxInflight) this.maxInflight = inflight;
    return PASS;
  }

  retryAfterMs(): undefined {
    return undefined;
  }

  exited(entry: Entry, now: number, rtMs: number): void {
    if (this.measuring) {
      if (!(entry.createdAt >= this.epoch)) return; // admitted under the limit before the measurement
      this.rtSum += rtMs;
      if (++this.samples >= ADAPTIVE_LIMIT_DEFAULTS.minRttSamples) this.finishMeasuring(now);
      return;
    }
    this.rtSum += rtMs;
    this.samples++;
    if (
      now - this.windowStart >= ADAPTIVE_LIMIT_DEFAULTS.windowMs &&
      this.samples >= ADAPTIVE_LIMIT_DEFAULTS.minWindowSamples
    )
      this.update(now);
  }

  released(): void {
    // A call that did not run says nothing about latency.
  }

  private update(now: number): void {
    const D = ADAPTIVE_LIMIT_DEFAULTS;
    if (this.maxInflight >= this.estimate / 2) {
      const sampleRtt = this.rtSum / this.samples;
      const raw = sampleRtt > 0 ? (this.minRtt * (1 + D.minRttBuffer)) / sampleRtt : D.maxGradient;
      const gradient = Math.min(D.maxGradient, Math.max(D.minGradient, raw));
      const scaled = this.estimate * gradient;
      this.estimate = Math.min(this.maxLimit, Math.max(this.minLimit, scaled + Math.sqrt(scaled)));
    }
    this.windowsAtMin = Math.floor(this.estimate) <= this.minLimit ? this.windowsAtMin + 1 : 0;
    this.openWindow(now);
    if (this.windowsAtMin >= D.windowsAtMinBeforeRemeasure) this.startMeasuring(now);
  }

  private startMeasuring(now: number): void {
    this.measuring = true;
    this.epoch = now;
    this.deferred = this.estimate;
    this.samples = 0;
    this.rtSum = 0;
  }

  private finishMeasuring(now: number): void {
    this.minRtt = this.rtSum / this.samples;
    this.measuring = false;
    this.estimate = this.deferred;
    this.windowsAtMin = 0;
    this.nextMeasureAt = now + ADAPTIVE_LIMIT_DEFAULTS.minRttIntervalMs;
    this.openWindow(now);
  }

  private openWindow(now: number): void {
    this.windowStart = now;
    this.samples = 0;
    this.rtSum = 0;
    this.maxInflight = 0;
  }
}
