import type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import { createGuardDecorator } from './create-guard-decorator';
import type { GuardDecorator } from './guard-decorator';
import type { MethodGuardOptions } from './method-guard-options';

/** Options of {@link CircuitBreaker}: a circuit breaker rule without `resource`, plus the method guard options. */
export interface CircuitBreakerDecoratorOptions extends Omit<CircuitBreakerRuleOptions, 'resource'>, MethodGuardOptions {}

/**
 * Guards a method with a circuit breaker, declared on the engine as a code-declared rule for
 * the method's resource (`ClassName.methodName` by default). Errors the method throws (or an
 * async method rejects with), except `exceptionsToIgnore`, are traced for the breaker and then
 * go to `fallback`, else are rethrown unchanged. While the circuit is open calls are blocked:
 * `blockHandler`, else `fallback`, else a `CircuitOpenError`.
 *
 * @throws RuleValidationError (`ERR_INVALID_RULE`) when the decorator is applied with invalid
 * options or a `blockHandler`/`fallback` name that is not a method of the class, naming the
 * method. A `TypeError` when applied to anything but a method.
 * @example
 * class FeedService {
 *   @CircuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000, fallback: 'cachedFeed' })
 *   async feed(userId: string): Promise<Feed> { ... }
 *   cachedFeed(userId: string, error: unknown): Feed { ... }
 * }
 */
export function CircuitBreaker(options: CircuitBreakerDecoratorOptions): GuardDecorator {
  return createGuardDecorator('@CircuitBreaker', 'circuitBreakers', options);
}
