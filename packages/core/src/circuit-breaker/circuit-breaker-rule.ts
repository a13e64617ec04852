/**
 * What trips a breaker: the ratio of slow calls, the ratio of failed calls, or the count of
 * failed calls in its window.
 */
export type CircuitBreakerStrategy = 'slowRequestRatio' | 'errorRatio' | 'errorCount';

/** A breaker's state. */
export type CircuitState = 'closed' | 'open' | 'halfOpen';

/** A circuit breaker rule as written by users (JSON-serialisable). */
export interface CircuitBreakerRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  readonly strategy: CircuitBreakerStrategy;
  /** A ratio within [0, 1] for the ratio strategies; a count of errors for `errorCount`. */
  readonly threshold: number;
  /** Required for `slowRequestRatio`: a call is slow when its response time is greater. */
  readonly maxAllowedRtMs?: number;
  /** No trip while the window holds fewer calls. @defaultValue 5 */
  readonly minRequestAmount?: number;
  /** The breaker's statistics window. @defaultValue 1000 */
  readonly statIntervalMs?: number;
  /** Buckets in the window (1 = a tumbling window, as Sentinel). @defaultValue 1 */
  readonly bucketCount?: number;
  /** How long the breaker stays open before probing. */
  readonly retryTimeoutMs: number;
  /** Calls let through as probes when half-open; all must succeed to close. @defaultValue 1 */
  readonly halfOpenProbes?: number;
}

/** A circuit breaker rule in force: validated, with every default resolved. */
export interface CircuitBreakerRule {
  readonly resource: string;
  readonly strategy: CircuitBreakerStrategy;
  readonly threshold: number;
  /** Set for `slowRequestRatio` only. */
  readonly maxAllowedRtMs?: number;
  readonly minRequestAmount: number;
  readonly statIntervalMs: number;
  readonly bucketCount: number;
  readonly retryTimeoutMs: number;
  readonly halfOpenProbes: number;
}

/** One breaker's state, from `Floodgate.circuitState()`. */
export interface CircuitBreakerStatus {
  readonly rule: CircuitBreakerRule;
  readonly state: CircuitState;
  /** While open: ms until probing starts. */
  readonly retryAfterMs?: number;
}

/** The `circuitStateChange` event. */
export interface CircuitStateChangeEvent {
  readonly resource: string;
  readonly rule: CircuitBreakerRule;
  readonly from: CircuitState;
  readonly to: CircuitState;
  /**
   * On closed → open: the ratio or count that tripped it. On half-open → open: `1` (a probe
   * failed) as in Sentinel. Otherwise `undefined`.
   */
  readonly value: number | undefined;
}
