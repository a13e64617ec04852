import type { FlowRuleOptions } from '../flow/flow-rule';
import { createGuardDecorator } from './create-guard-decorator';
import type { GuardDecorator } from './guard-decorator';
import type { MethodGuardOptions } from './method-guard-options';

/** Options of {@link RateLimit}: a flow rule without `resource`, plus the method guard options. */
export interface RateLimitDecoratorOptions extends Omit<FlowRuleOptions, 'resource'>, MethodGuardOptions {}

/**
 * Limits a method with a flow rule (QPS or concurrency), declared on the engine as a
 * code-declared rule for the method's resource (`ClassName.methodName` by default). A sync
 * method stays sync and never waits (a `throttle` rule blocks a call that would have to queue);
 * an `async` method may queue up to `maxQueueingTimeMs`. A blocked call goes to `blockHandler`,
 * else `fallback`, else throws a `FlowBlockError`.
 *
 * Works with standard decorators and with legacy ones (`experimentalDecorators`); stacked with
 * `@CircuitBreaker` / `@HotParam` it shares their resource and their single entry per call.
 *
 * @throws RuleValidationError (`ERR_INVALID_RULE`) when the decorator is applied with invalid
 * options or a `blockHandler`/`fallback` name that is not a method of the class, naming the
 * method. A `TypeError` when applied to anything but a method.
 * @example
 * class UserService {
 *   @RateLimit({ threshold: 100, fallback: 'busy' })
 *   getUser(id: string): User { ... }
 *   busy(id: string, error: unknown): User { ... }
 * }
 */
export function RateLimit(options: RateLimitDecoratorOptions): GuardDecorator {
  return createGuardDecorator('@RateLimit', 'flow', options);
}
