import type { Checker, ExitHook } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import type { BreakerView } from '../engine/resource-rules';
import { CircuitBreakerChecker } from './circuit-breaker-checker';
import type { CircuitBreakerRule } from './circuit-breaker-rule';

/**
 * Compiles one resource's circuit breaker rules: one breaker per rule, in rule order. A rule
 * identical to one in force before keeps that breaker (its state, window and running probes);
 * a new or changed rule starts a fresh, closed breaker.
 */
export function compileCircuitBreakerRules(
  rules: readonly CircuitBreakerRule[],
  ctx: CompileContext,
): Array<Checker & ExitHook & BreakerView> {
  return rules.map((rule) => ctx.reuse('circuitBreaker', rule, () => new CircuitBreakerChecker(rule, ctx.events)));
}
