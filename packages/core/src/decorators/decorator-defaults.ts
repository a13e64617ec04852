import { floodgate } from '../engine/floodgate';

/**
 * Defaults of the method decorators (`@RateLimit`, `@CircuitBreaker`, `@HotParam`). The
 * default `resource` is computed, not stored: `ClassName.methodName` of the class that defines
 * the method.
 */
export const DECORATOR_DEFAULTS = Object.freeze({
  /** The engine rules are declared on and calls are checked by: the shared engine. */
  floodgate,
  /**
   * The `paramKey` under which a `@HotParam({ param })` value is passed to the engine; a
   * second `param`-based `@HotParam` on the same method gets `param1`, a third `param2`...
   */
  paramKey: 'param',
});
