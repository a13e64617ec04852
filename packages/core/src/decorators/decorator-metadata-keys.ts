// The one place reflect-metadata is imported (STYLE 22): every decorator file reaches
// `Reflect.defineMetadata` / `Reflect.getOwnMetadata` through this module.
import 'reflect-metadata';

/**
 * The reflect-metadata keys under which the decorators record what they guard, on the class
 * (static methods) or its prototype (instance methods), per method name. Each value is frozen.
 *
 * @example
 * Reflect.getOwnMetadata(DECORATOR_METADATA_KEYS.rateLimit, UserService.prototype, 'getUser');
 * // → [{ resource: 'UserService.getUser', metric: 'qps', threshold: 10, ... }]
 */
export const DECORATOR_METADATA_KEYS = Object.freeze({
  /** The method's resource name (a string). */
  resource: 'floodgate:resource',
  /** The `@RateLimit` flow rules, normalised (`FlowRule[]`). */
  rateLimit: 'floodgate:rate-limit',
  /** The `@CircuitBreaker` rules, normalised (`CircuitBreakerRule[]`). */
  circuitBreaker: 'floodgate:circuit-breaker',
  /** The `@HotParam` rules, normalised (`HotParamRule[]`). */
  hotParam: 'floodgate:hot-param',
} as const);
