import { scheduleOn, type Clock } from '../kernel/clock';
import type { Entry } from '../kernel/entry';
import { TimeoutError, type BlockError } from '../kernel/errors';

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
  readonly exceptionsToIgnore?: ((error: unknown) => boolean) | readonly (abstract new (...args: never[]) => unknown)[];
  /**
   * Answers a call whose promise has not settled after this many ms with a `TimeoutError`
   * (a failure, and a slow call, for circuit breakers, recorded then), and aborts the call's
   * `AbortSignal`. Its concurrency slot stays held until its promise settles: a concurrency
   * limit bounds the work still running, not only the callers still waiting. At most 2^31 − 1.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number;
}

/** Classes of errors, or a predicate, for `exceptionsToIgnore`. */
export type ErrorMatcher = NonNullable<OutcomeHandlers<unknown>['exceptionsToIgnore']>;

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
 * (its error then surfaces) or `fallback` throws. With `concludeOnly` (a timeout), the entry's
 * outcome is recorded but its slot stays held: the caller exits it when the call settles.
 */
export function answerFailure<T>(entry: Entry, error: unknown, handlers: OutcomeHandlers<T>, concludeOnly = false): T {
  let ignored = false;
  try {
    ignored = isIgnored(error, handlers.exceptionsToIgnore);
  } finally {
    if (!ignored) entry.traceError(error);
    if (concludeOnly) entry.conclude();
    else entry.exit();
  }
  if (ignored || handlers.fallback === undefined) throw error;
  return handlers.fallback(error);
}

/** What {@link settle} needs for a call with a timeout. */
export interface Deadline {
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Aborted with the `TimeoutError` when the time is up (the call's signal). */
  readonly controller: AbortController;
  /** Unlinks the caller's own signal from `controller` ({@link linkSignal}), if one was given. */
  readonly unlink: (() => void) | undefined;
}

/**
 * Aborts `controller` with the reason of `signal` when `signal` aborts, until the returned
 * function unlinks them. What `AbortSignal.any([signal, controller.signal])` does, without
 * its retention on Node 20: there a long-lived signal keeps a reference to every signal it
 * was ever combined into, until it aborts (nodejs/node#55351, about 60 bytes a call). Here
 * the link is one listener, removed when the call settles.
 */
export function linkSignal(signal: AbortSignal, controller: AbortController): () => void {
  if (signal.aborted) {
    controller.abort(signal.reason);
    return noop;
  }
  const forward = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  return () => signal.removeEventListener('abort', forward);
}

function noop(): void {
  // Nothing was linked, or no timer set yet.
}

/**
 * A call that returned: exits the entry at once for a plain value; for a promise (or any
 * thenable), exits when it settles and answers a rejection as {@link answerFailure} does, so
 * response time, concurrency and traced errors cover the whole asynchronous call. A thenable
 * whose `then` throws is a rejection. With a `deadline`, a call still unsettled when it passes
 * is answered with a `TimeoutError`, recorded then (a failure and a slow call for circuit
 * breakers; a half-open probe decided), and its entry exits, giving back its concurrency, only
 * when its promise settles. The caller's signal is unlinked when the call settles or times out.
 */
export function settle<T>(entry: Entry, result: T, handlers: OutcomeHandlers<T>, deadline?: Deadline): T {
  let thenable: boolean;
  try {
    thenable = isThenable(result);
  } catch (error) {
    deadline?.unlink?.();
    return answerFailure(entry, error, handlers);
  }
  if (!thenable) {
    deadline?.unlink?.();
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
  const { clock, timeoutMs, controller, unlink } = deadline;
  let answered = false;
  return new Promise((resolve, reject) => {
    const answer = (how: () => unknown): void => {
      answered = true;
      try {
        resolve(how());
      } catch (error) {
        reject(error);
      }
    };
    let cancelTimeout = noop;
    // The call settles: answered now, or (after its timeout) it gives back its slot.
    const settled = (how: () => unknown): void => {
      unlink?.();
      if (!answered) {
        cancelTimeout();
        answer(how);
      } else entry.exit();
    };
    promise.then(
      (value) =>
        settled(() => {
          entry.exit();
          return value;
        }),
      (error: unknown) => settled(() => failed(error)),
    );
    // After the call is watched: a clock whose `schedule` throws rejects the call with its error,
    // and the call still gives back its slot when it settles.
    cancelTimeout = scheduleOn(clock, timeoutMs, () => {
      if (answered) return;
      unlink?.();
      const timeout = new TimeoutError(entry.resource, timeoutMs);
      controller.abort(timeout);
      answer(() => answerFailure(entry, timeout, handlers as OutcomeHandlers<unknown>, true));
    });
  }) as T;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
