/**
 * What trips a breaker: the ratio of slow calls, the ratio of failed calls, or the count of
 * failed calls in its window.
 */
export type CircuitBreakerStrategy = 'slowRequestRatio' | 'errorRatio' | 'errorCount';

/** A breaker's state. */
export type CircuitState = 'closed' | 'open' | 'halfOpen';

/**
 * A circuit breaker rule as written by users (JSON-serialisable). Each rule is its own breaker
 * with its own window; several may guard one resource, and a call is refused while any is open.
 *
 * @example
 * fg.loadCircuitBreakerRules([
 *   { resource: 'getUser', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 },
 *   { resource: 'getUser', strategy: 'slowRequestRatio', threshold: 0.8, maxAllowedRtMs: 200, retryTimeoutMs: 10_000 },
 * ]);
 */
export interface CircuitBreakerRuleOptions {
  /** The guarded resource. */
  readonly resource: string;
  /** What trips the breaker. */
  readonly strategy: CircuitBreakerStrategy;
  /**
   * A ratio within [0, 1] for the ratio strategies; a count of errors (>= 0) for `errorCount`.
   * The breaker trips when the window's value is greater (a ratio threshold of 1.0 trips at 1.0).
   */
  readonly threshold: number;
  /**
   * Required for `slowRequestRatio` (and refused by the other strategies): a call is slow when
   * its response time is greater. At least 0.
   */
  readonly maxAllowedRtMs?: number;
  /** No trip while the window holds fewer calls. @defaultValue 5 */
  readonly minRequestAmount?: number;
  /** The breaker's statistics window. @defaultValue 1000 */
  readonly statIntervalMs?: number;
  /** Buckets in the window (1 = a tumbling window, as Sentinel). @defaultValue 1 */
  readonly bucketCount?: number;
  /**
   * How long the breaker stays open before probing, in ms (> 0). Also how long a probe may run
   * before it is released as failed.
   */
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
  /**
   * While open: ms until probing starts (0 once due: the next call probes). While half-open
   * with every probe taken: ms until the oldest running probe times out. Absent otherwise.
   */
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
