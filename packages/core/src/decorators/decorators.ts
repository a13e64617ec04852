import type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRuleOptions } from '../flow/flow-rule';
import type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
import { createGuardDecorator } from './create-guard-decorator';
import type { GuardDecorator, MethodGuardOptions } from './method-guard';

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

/** Options of {@link CircuitBreaker}: a circuit breaker rule without `resource`, plus the method guard options. */
export interface CircuitBreakerDecoratorOptions
  extends Omit<CircuitBreakerRuleOptions, 'resource'>, MethodGuardOptions {}

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

/**
 * Options of {@link HotParam}: a hotspot rule without `resource`, limiting per value of one
 * argument (`paramIndex`) or per value computed from the arguments (`param`), plus the method
 * guard options.
 */
export type HotParamDecoratorOptions = Omit<HotParamRuleOptions, 'resource' | 'paramIndex' | 'paramKey'> &
  MethodGuardOptions &
  (
    | {
        /** The argument's index; negative counts from the end. */
        readonly paramIndex: number;
        readonly param?: undefined;
        readonly paramKey?: undefined;
      }
    | {
        /**
         * Computes the value to limit by from the method's arguments (called with the method's
         * `this`); `undefined` or `null` leaves the call unlimited by the rule.
         */
        // The method's arguments cannot be named by a decorator factory; `any` lets `(id: string) => id` in.
        readonly param: (...args: any[]) => unknown;
        /**
         * The name the value is passed to the engine under (the declared rule's `paramKey`); a
         * loaded rule for the resource may use it.
         * @defaultValue 'param' (then 'param1', 'param2'... for further `param` hotspots on the method)
         */
        readonly paramKey?: string;
        readonly paramIndex?: undefined;
      }
  );

/**
 * Limits a method per distinct value of a parameter (a user id, a tenant, a SKU) with a hotspot
 * rule, declared on the engine as a code-declared rule for the method's resource
 * (`ClassName.methodName` by default). With `paramIndex` the engine reads the argument; with
 * `param` the decorator computes the value on each call and passes it under `paramKey`. A
 * blocked call goes to `blockHandler`, else `fallback`, else throws a `HotParamBlockError`.
 *
 * @throws RuleValidationError (`ERR_INVALID_RULE`) when the decorator is applied with invalid
 * options (including neither or both of `paramIndex` and `param`) or a
 * `blockHandler`/`fallback` name that is not a method of the class, naming the method. A
 * `TypeError` when applied to anything but a method.
 * @example
 * class UserService {
 *   @HotParam({ param: (userId: string) => userId, paramKey: 'userId', threshold: 5, blockHandler: 'slowDown' })
 *   async getProfile(userId: string): Promise<Profile> { ... }
 *   slowDown(userId: string, error: BlockError): Profile { ... }
 * }
 */
export function HotParam(options: HotParamDecoratorOptions): GuardDecorator {
  return createGuardDecorator('@HotParam', 'hotParams', options);
}
