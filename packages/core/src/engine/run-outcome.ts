import type { Clock } from '../kernel/clock';
import type { Entry } from '../kernel/entry';
import { TimeoutError, type BlockError } from '../kernel/errors';

/** A class of errors, or a predicate, for `exceptionsToIgnore`. */
export type ErrorMatcher = ((error: unknown) => boolean) | readonly (abstract new (...args: never[]) => unknown)[];

/** How a guarded call answers blocks and failures (the options shared by `run`, `runSync` and decorators). */
export interface OutcomeHandlers<T> {
  /** Answers a blocked call instead of throwing the {@link BlockError}. */
  readonly blockHandler?: (error: BlockError) => T;
  /**
   * Answers a blocked call when there is no `blockHandler`, and a call that threw or timed out
   * (unless the error is ignored); its result replaces the call's.
   */
  readonly fallback?: (error: unknown) => T;
  /**
   * Errors rethrown as they are: not traced for circuit breakers and not given to `fallback`
   * (Sentinel's `exceptionsToIgnore`). Classes (matched with `instanceof`) or a predicate.
   */
  readonly exceptionsToIgnore?: ErrorMatcher;
  /**
   * Answers a call whose promise has not settled after this many ms with a `TimeoutError`
   * (a failure, and a slow call, for circuit breakers): its entry exits then, whatever the call
   * does later, and the call's `AbortSignal` aborts. At most 2^31 − 1.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number;
}

/** Whether `error` is one the caller asked to ignore. */
function isIgnored(error: unknown, matcher: ErrorMatcher | undefined): boolean {
  if (matcher === undefined) return false;
  if (typeof matcher === 'function') return matcher(error);
  return matcher.some((type) => error instanceof type);
}

/** A blocked call: `blockHandler`, else `fallback`, else the block error is thrown. */
export function answerBlock<T>(error: BlockError, handlers: OutcomeHandlers<T>): T {
  if (handlers.blockHandler !== undefined) return handlers.blockHandler(error);
  if (handlers.fallback !== undefined) return handlers.fallback(error);
  throw error;
}

/**
 * A call that threw: traces the error (unless ignored), exits the entry, then answers with
 * `fallback` or rethrows. The entry exits even when the `exceptionsToIgnore` predicate throws
 * (its error then surfaces) or `fallback` throws.
 */
export function answerFailure<T>(entry: Entry, error: unknown, handlers: OutcomeHandlers<T>): T {
  let ignored = false;
  try {
    ignored = isIgnored(error, handlers.exceptionsToIgnore);
  } finally {
    if (!ignored) entry.traceError(error);
    entry.exit();
  }
  if (ignored || handlers.fallback === undefined) throw error;
  return handlers.fallback(error);
}

/** What {@link settle} needs for a call with a timeout. */
export interface Deadline {
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Aborted with the `TimeoutError` when the time is up. */
  readonly controller: AbortController;
}

/**
 * A call that returned: exits the entry at once for a plain value; for a promise (or any
 * thenable), exits when it settles and answers a rejection as {@link answerFailure} does, so
 * response time, concurrency and traced errors cover the whole asynchronous call. A thenable
 * whose `then` throws is a rejection. With a `deadline`, a call still unsettled when it passes
 * is answered with a `TimeoutError` and its entry exits then.
 */
export function settle<T>(entry: Entry, result: T, handlers: OutcomeHandlers<T>, deadline?: Deadline): T {
  let thenable: boolean;
  try {
    thenable = isThenable(result);
  } catch (error) {
    return answerFailure(entry, error, handlers);
  }
  if (!thenable) {
    entry.exit();
    return result;
  }
  const promise = Promise.resolve(result as PromiseLike<unknown>);
  const failed = (error: unknown): unknown => answerFailure(entry, error, handlers as OutcomeHandlers<unknown>);
  if (deadline === undefined) {
    return promise.then((value) => {
      entry.exit();
      return value;
    }, failed) as T;
  }
  const { clock, timeoutMs, controller } = deadline;
  const timer = new AbortController();
  let done = false;
  return new Promise((resolve, reject) => {
    const finish = (answer: () => unknown): void => {
      if (done) return;
      done = true;
      timer.abort();
      try {
        resolve(answer());
      } catch (error) {
        reject(error);
      }
    };
    promise.then(
      (value) =>
        finish(() => {
          entry.exit();
          return value;
        }),
      (error: unknown) => finish(() => failed(error)),
    );
    clock.sleep(timeoutMs, timer.signal).then(
      () =>
        finish(() => {
          const timeout = new TimeoutError(entry.resource, timeoutMs);
          controller.abort(timeout);
          return failed(timeout);
        }),
      () => {
        // The call settled first and cancelled the timer.
      },
    );
  }) as T;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
