import type { BlockError } from '../errors/block-error';
import type { Entry } from './entry';

/** A class of errors, or a predicate, for `exceptionsToIgnore`. */
export type ErrorMatcher = ((error: unknown) => boolean) | readonly (abstract new (...args: never[]) => unknown)[];

/** How a guarded call answers blocks and failures (the options shared by `run`, `runSync` and decorators). */
export interface OutcomeHandlers<T> {
  /** Answers a blocked call instead of throwing the {@link BlockError}. */
  readonly blockHandler?: (error: BlockError) => T;
  /**
   * Answers a blocked call when there is no `blockHandler`, and a call that threw (unless the
   * error is ignored); its result replaces the call's.
   */
  readonly fallback?: (error: unknown) => T;
  /**
   * Errors rethrown as they are: not traced for circuit breakers and not given to `fallback`
   * (Sentinel's `exceptionsToIgnore`). Classes (matched with `instanceof`) or a predicate.
   */
  readonly exceptionsToIgnore?: ErrorMatcher;
}

/** Whether `error` is one the caller asked to ignore. */
export function isIgnored(error: unknown, matcher: ErrorMatcher | undefined): boolean {
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
 * `fallback` or rethrows.
 */
export function answerFailure<T>(entry: Entry, error: unknown, handlers: OutcomeHandlers<T>): T {
  const ignored = isIgnored(error, handlers.exceptionsToIgnore);
  if (!ignored) entry.traceError(error);
  entry.exit();
  if (ignored || handlers.fallback === undefined) throw error;
  return handlers.fallback(error);
}

/**
 * A call that returned: exits the entry at once for a plain value; for a promise (or any
 * thenable), exits when it settles and answers a rejection as {@link answerFailure} does, so
 * response time, concurrency and traced errors cover the whole asynchronous call.
 */
export function settle<T>(entry: Entry, result: T, handlers: OutcomeHandlers<T>): T {
  if (!isThenable(result)) {
    entry.exit();
    return result;
  }
  return result.then(
    (value) => {
      entry.exit();
      return value;
    },
    (error: unknown) => answerFailure(entry, error, handlers as OutcomeHandlers<unknown>),
  ) as T;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
