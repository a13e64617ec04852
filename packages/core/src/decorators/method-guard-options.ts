import type { Floodgate } from '../engine/floodgate';
import type { ErrorMatcher } from '../engine/run-outcome';

/**
 * A `blockHandler` or `fallback`: the name of a method of the same class (called on the same
 * `this`: the instance, or the class for a static method), or a function (called with the
 * same `this`). It receives the guarded method's arguments followed by the error.
 */
// Handlers take the guarded method's arguments, which a decorator factory cannot name: `any`
// keeps `(id: string, error: BlockError) => User` assignable.
export type GuardHandler = string | ((...args: any[]) => unknown);

/**
 * Options shared by `@RateLimit`, `@CircuitBreaker` and `@HotParam`. When several of these
 * decorators are stacked on one method, each option may be given by any one of them (or
 * repeated with the same value); giving two different values is an error.
 */
export interface MethodGuardOptions {
  /**
   * The resource the method's calls are counted and limited as.
   * @defaultValue `ClassName.methodName`, the class being the one that defines the method
   */
  readonly resource?: string;
  /**
   * The engine the rules are declared on and the calls go through.
   * @defaultValue the shared `floodgate` engine
   */
  readonly floodgate?: Floodgate;
  /**
   * Answers a blocked call: `blockHandler(...args, blockError)`; its result (or its own thrown
   * error) replaces the call's. As Sentinel's `blockHandler`.
   * @defaultValue none: a block goes to `fallback`, else the `BlockError` is thrown
   */
  readonly blockHandler?: GuardHandler;
  /**
   * Answers a blocked call when there is no `blockHandler`, and a call that threw an error not
   * in `exceptionsToIgnore`: `fallback(...args, error)`; its result (or its own thrown error)
   * replaces the call's. As Sentinel's `fallback`.
   * @defaultValue none: the error is thrown
   */
  readonly fallback?: GuardHandler;
  /**
   * Errors rethrown as they are: not traced for circuit breakers and not given to `fallback`.
   * Classes (matched with `instanceof`) or a predicate. As Sentinel's `exceptionsToIgnore`.
   * @defaultValue none: every business error is traced
   */
  readonly exceptionsToIgnore?: ErrorMatcher;
}
