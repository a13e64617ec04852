import type { RuleReader } from '../rules/rule-reader';
import { CIRCUIT_BREAKER_RULE_DEFAULTS as D } from './circuit-breaker-rule-defaults';
import type { CircuitBreakerRule, CircuitBreakerStrategy } from './circuit-breaker-rule';

const FIELDS = [
  'resource', 'strategy', 'threshold', 'maxAllowedRtMs', 'minRequestAmount',
  'statIntervalMs', 'bucketCount', 'retryTimeoutMs', 'halfOpenProbes',
] as const;

const STRATEGIES: readonly CircuitBreakerStrategy[] = ['slowRequestRatio', 'errorRatio', 'errorCount'];

/**
 * Validates one circuit breaker rule and resolves its defaults. Problems go to `reader`; the
 * result is only meaningful when none were found.
 *
 * Checks: a known `strategy`; a ratio `threshold` within [0, 1] (`errorCount`: >= 0);
 * `maxAllowedRtMs` >= 0, required by `slowRequestRatio` and refused by the other strategies;
 * `retryTimeoutMs` and `statIntervalMs` > 0; `minRequestAmount` an integer >= 0;
 * `halfOpenProbes` and `bucketCount` integers >= 1, with `statIntervalMs` splitting into
 * `bucketCount` buckets of whole milliseconds; no unknown field.
 */
export function normalizeCircuitBreakerRule(input: unknown, path: string, reader: RuleReader): CircuitBreakerRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  const resource = reader.string(obj, 'resource', path);
  const strategy = reader.oneOf(obj, 'strategy', path, STRATEGIES);
  const knownStrategy = STRATEGIES.includes(obj.strategy as CircuitBreakerStrategy);
  const slow = strategy === 'slowRequestRatio' && knownStrategy;
  const threshold = strategy === 'errorCount' || !knownStrategy
    ? reader.number(obj, 'threshold', path, { min: 0 })
    : reader.number(obj, 'threshold', path, { min: 0, max: 1 });
  let maxAllowedRtMs: number | undefined;
  if (slow) {
    maxAllowedRtMs = reader.number(obj, 'maxAllowedRtMs', path, { min: 0 });
  } else if (knownStrategy && obj.maxAllowedRtMs !== undefined) {
    reader.fail(`${path}.maxAllowedRtMs`, `is only allowed when strategy is 'slowRequestRatio', got strategy '${strategy}'`);
  }
  const minRequestAmount = reader.number(obj, 'minRequestAmount', path, { min: 0, integer: true }, D.minRequestAmount);
  const statIntervalMs = reader.number(obj, 'statIntervalMs', path, { above: 0 }, D.statIntervalMs);
  const bucketCount = reader.number(obj, 'bucketCount', path, { min: 1, integer: true }, D.bucketCount);
  const retryTimeoutMs = reader.number(obj, 'retryTimeoutMs', path, { above: 0 });
  const halfOpenProbes = reader.number(obj, 'halfOpenProbes', path, { min: 1, integer: true }, D.halfOpenProbes);
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
  };
}
