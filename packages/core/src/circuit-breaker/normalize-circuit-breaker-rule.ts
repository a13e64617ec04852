import type { RuleReader } from '../rules/rule-reader';
import type { CircuitBreakerRule } from './circuit-breaker-rule';

// PLACEHOLDER (issue #3 replaces this file): accepts nothing yet.
/** Validates one circuit breaker rule and resolves its defaults. */
export function normalizeCircuitBreakerRule(input: unknown, path: string, reader: RuleReader): CircuitBreakerRule | undefined {
  reader.object(input, path);
  reader.fail(path, 'circuit breaker rules are not implemented yet');
  return undefined;
}
