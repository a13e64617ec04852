/**
 * Defaults of a circuit breaker rule's optional fields (Sentinel's `DegradeRule` defaults).
 * `strategy`, `threshold` and `retryTimeoutMs` have none: a rule must name them.
 */
export const CIRCUIT_BREAKER_RULE_DEFAULTS = Object.freeze({
  /** No trip while the window holds fewer completed calls (Sentinel's `minRequestAmount`). */
  minRequestAmount: 5,
  /** One second of statistics (Sentinel's `statIntervalMs`). */
  statIntervalMs: 1000,
  /** One bucket: a tumbling window, as Sentinel's `LeapArray(1, statIntervalMs)`. */
  bucketCount: 1,
  /** A single probe when half-open, as Sentinel Java. */
  halfOpenProbes: 1,
} as const);
