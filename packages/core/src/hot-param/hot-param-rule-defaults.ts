/**
 * Defaults and limits of a hotspot rule's optional fields. The default `capacity` depends on
 * the rule: `min(capacityPerSecond × ⌈durationMs / 1000⌉, maxDefaultCapacity)` for `qps`,
 * `concurrencyCapacity` for `concurrency` (Sentinel's `ParameterMetric` sizes).
 */
export const HOT_PARAM_RULE_DEFAULTS = Object.freeze({
  /** Count calls per duration, per value (Sentinel's default grade QPS). */
  metric: 'qps',
  /** Sentinel's token bucket (`controlBehavior` DEFAULT). */
  behavior: 'reject',
  /** One second (Sentinel's `durationInSec = 1`). */
  durationMs: 1000,
  /** No extra tokens (Sentinel's `burstCount = 0`). */
  burstCount: 0,
  /** Strict pacing: a throttled call never queues (Sentinel's hotspot `maxQueueingTimeMs = 0`). */
  maxQueueingTimeMs: 0,
  /**
   * Values a `qps` rule tracks per started second of `durationMs` (Sentinel's
   * `BASE_PARAM_MAX_CAPACITY`). Sub-second and fractional durations round up to whole seconds,
   * so no rule tracks fewer than 4000 values by default.
   */
  capacityPerSecond: 4000,
  /** Most values a `qps` rule tracks by default (Sentinel's `TOTAL_MAX_CAPACITY`). */
  maxDefaultCapacity: 200_000,
  /** Values a `concurrency` rule tracks by default (Sentinel's `THREAD_COUNT_MAX_CAPACITY`). */
  concurrencyCapacity: 4000,
  /**
   * The largest `capacity` accepted. The LRU allocates about 30 bytes per slot up front, so
   * this bounds one rule's fixed cost at about 300 MB.
   */
  maxCapacity: 10_000_000,
} as const);
