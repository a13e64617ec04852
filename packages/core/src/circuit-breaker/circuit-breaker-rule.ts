import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import { MAX_DURATION_MS, type RuleReader } from '../kernel/rule-reader';

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
export interface CircuitBreakerRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * What trips the breaker: the ratio of slow calls, the ratio of failed calls, or the count of
   * failed calls in its window.
   */
  readonly strategy: 'slowRequestRatio' | 'errorRatio' | 'errorCount';
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
  /** No trip while the window holds fewer calls; at least 1. @defaultValue 5 */
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
  /**
   * One breaker shared by every instance, through the engine's cluster backend
   * (`redisCluster()` from `@floodgate/redis`): its window and state live in the store, so when
   * the instances together cross the threshold every instance opens, one instance at a time
   * holds each half-open probe, and the probes' outcome closes or reopens it for all. While the
   * store cannot be reached, each instance decides by its own breaker (`clusterFallback`).
   * Without a backend, or with one that cannot share breakers, the rule acts locally.
   * @defaultValue false
   */
  readonly cluster?: boolean;
}

/** A circuit breaker rule in force: validated, with every default resolved. */
export interface CircuitBreakerRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** What trips the breaker. */
  readonly strategy: CircuitBreakerRuleOptions['strategy'];
  /** The ratio (within [0, 1]) or count of errors the window's value must exceed to trip. */
  readonly threshold: number;
  /** Set for `slowRequestRatio` only. */
  readonly maxAllowedRtMs?: number;
  /** No trip while the window holds fewer calls. */
  readonly minRequestAmount: number;
  /** The breaker's statistics window, in ms. */
  readonly statIntervalMs: number;
  /** Buckets in the window. */
  readonly bucketCount: number;
  /** How long the breaker stays open before probing, in ms. */
  readonly retryTimeoutMs: number;
  /** Calls let through as probes when half-open. */
  readonly halfOpenProbes: number;
  /** Set (`true`) for a breaker shared through the cluster backend; absent otherwise. */
  readonly cluster?: true;
}

/** One breaker's state, from `Floodgate.circuitState()`. */
export interface CircuitBreakerStatus {
  /** The breaker's rule, as it is in force. */
  readonly rule: CircuitBreakerRule;
  /** Its state now. */
  readonly state: CircuitState;
  /**
   * While open: ms until probing starts (0 once due: the next call probes). While half-open
   * with every probe taken: ms until the oldest running probe times out. Absent otherwise.
   */
  readonly retryAfterMs?: number;
}

/** The `circuitStateChange` event. */
export interface CircuitStateChangeEvent {
  /** The resource the breaker guards. */
  readonly resource: string;
  /** The breaker's rule, as it is in force. */
  readonly rule: CircuitBreakerRule;
  /**
   * The breaker, named by its position among the resource's breakers in `getRules()` order
   * (`'circuitBreaker#0'`), as block events and metric labels name rules.
   */
  readonly ruleId: string;
  /** The state it left. */
  readonly from: CircuitState;
  /** The state it entered. */
  readonly to: CircuitState;
  /**
   * On closed → open: the ratio or count that tripped it. On half-open → open: `1` (a probe
   * failed) as in Sentinel. Otherwise `undefined`.
   */
  readonly value: number | undefined;
}

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

const FIELDS = [
  'resource',
  'strategy',
  'threshold',
  'maxAllowedRtMs',
  'minRequestAmount',
  'statIntervalMs',
  'bucketCount',
  'retryTimeoutMs',
  'halfOpenProbes',
  'cluster',
] as const;

const DURATION = { above: 0, max: MAX_DURATION_MS } as const;
const STRATEGIES: readonly CircuitBreakerRule['strategy'][] = ['slowRequestRatio', 'errorRatio', 'errorCount'];

/**
 * Validates one circuit breaker rule and resolves its defaults. Problems go to `reader`; the
 * result is only meaningful when none were found.
 *
 * Checks: a known `strategy`; a ratio `threshold` within [0, 1] (`errorCount`: >= 0);
 * `maxAllowedRtMs` >= 0, required by `slowRequestRatio` and refused by the other strategies;
 * `retryTimeoutMs` and `statIntervalMs` > 0 and at most 2^31 − 1; `minRequestAmount` an integer
 * >= 1 (as Sentinel Java's `DegradeRuleManager.isValidRule`; sentinel-golang accepts 0, which
 * can only mean 1 here: a breaker never trips on an empty window);
 * `halfOpenProbes` and `bucketCount` integers >= 1, with `statIntervalMs` splitting into
 * `bucketCount` buckets of whole milliseconds; `cluster` a boolean; no unknown field.
 */
export function normalizeCircuitBreakerRule(
  input: unknown,
  path: string,
  reader: RuleReader,
): CircuitBreakerRule | undefined {
  const D = CIRCUIT_BREAKER_RULE_DEFAULTS;
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const resource = reader.resource(obj, 'resource', path);
  const strategy = reader.oneOf(obj, 'strategy', path, STRATEGIES);
  const knownStrategy = STRATEGIES.includes(obj.strategy as CircuitBreakerRule['strategy']);
  const slow = strategy === 'slowRequestRatio' && knownStrategy;
  const threshold =
    strategy === 'errorCount' || !knownStrategy
      ? reader.number(obj, 'threshold', path, { min: 0 })
      : reader.number(obj, 'threshold', path, { min: 0, max: 1 });
  let maxAllowedRtMs: number | undefined;
  if (slow) {
    maxAllowedRtMs = reader.number(obj, 'maxAllowedRtMs', path, { min: 0, max: MAX_DURATION_MS });
  } else if (knownStrategy && obj.maxAllowedRtMs !== undefined) {
    reader.fail(
      `${path}.maxAllowedRtMs`,
      `is only allowed when strategy is 'slowRequestRatio', got strategy '${strategy}'`,
    );
  }
  const minRequestAmount = reader.number(obj, 'minRequestAmount', path, { min: 1, integer: true }, D.minRequestAmount);
  const statIntervalMs = reader.number(obj, 'statIntervalMs', path, DURATION, D.statIntervalMs);
  const bucketCount = reader.number(obj, 'bucketCount', path, { min: 1, integer: true }, D.bucketCount);
  const retryTimeoutMs = reader.number(obj, 'retryTimeoutMs', path, DURATION);
  const halfOpenProbes = reader.number(obj, 'halfOpenProbes', path, { min: 1, integer: true }, D.halfOpenProbes);
  const cluster = reader.boolean(obj, 'cluster', path, false);
  if (!Number.isInteger(statIntervalMs / bucketCount)) {
    reader.fail(
      `${path}.statIntervalMs`,
      `must split into bucketCount (${bucketCount}) buckets of whole milliseconds, got ${statIntervalMs}`,
    );
  }
  return {
    resource,
    strategy,
    threshold,
    ...(slow ? { maxAllowedRtMs } : {}),
    minRequestAmount,
    statIntervalMs,
    bucketCount,
    retryTimeoutMs,
    halfOpenProbes,
    ...(cluster ? { cluster: true as const } : {}),
  };
}
