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
   *
   * When the rules are declared: legacy decorators (`experimentalDecorators`) see the class,
   * so they declare the rules and check handler names when the class is defined. Standard
   * decorators do not see the class of the method they decorate, so for the default resource
   * the decorators validate every option when the class is defined but declare the rules (and
   * check handler names) once the class is known: at class definition for a static method (an
   * initializer), at the first construction for an instance method (an initializer), or at
   * the first call or `getGuardedMethods()` if earlier. Give `resource` to declare at class
   * definition in both modes.
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
  /**
   * Answers a call of an `async` (or promise-returning) method still unsettled after this many
   * ms with a `TimeoutError` (a failure, and a slow call, for circuit breakers): its entry exits
   * then, and the call's `AbortSignal` (not visible to the method) aborts. At most 2^31 − 1.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number;
  /**
   * Whether calls of the method enter the service from outside (a message handler, an RPC
   * endpoint): system protection rules check inbound calls only.
   * @defaultValue false
   */
  readonly inbound?: boolean;
}
