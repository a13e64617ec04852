import type { Checker, ExitHook } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { BreakerView } from '../engine/resource-rules';
import type { CircuitBreakerRule } from './circuit-breaker-rule';

// PLACEHOLDER (issue #3 replaces this file).
/** Compiles one resource's circuit breaker rules, keeping the state of unchanged rules. */
export function compileCircuitBreakerRules(
  _rules: readonly CircuitBreakerRule[],
  _ctx: CompileContext,
): Array<Checker & ExitHook & BreakerView> {
  return [];
}
