import { isBlockError } from '@floodgate/core';
import { Agent, type Dispatcher } from 'undici';
import { floodgateInterceptor, type FloodgateInterceptor } from './interceptor';
import type { FloodgateInterceptorOptions } from './outbound-options';

/** A `fetch` function: the global one, undici's, or one that takes undici's `dispatcher` init field. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Options of {@link guardedFetch}: the interceptor's, the `fetch` to call, and a fallback. */
export interface GuardedFetchOptions extends FloodgateInterceptorOptions {
  /**
   * The `fetch` to guard: Node's global `fetch` or undici's; it is called with the guarded
   * dispatcher as `init.dispatcher`.
   * @defaultValue `globalThis.fetch`
   */
  readonly fetch?: FetchFunction;
  /** The dispatcher the guard composes on. @defaultValue a new undici `Agent` */
  readonly dispatcher?: Dispatcher;
  /**
   * Answers a call that was refused (a block error) or failed without an answer (a connection
   * error, a `TimeoutError`) instead of rejecting; its result is the call's. A caller's own abort
   * is never given to it.
   * @defaultValue none: the call rejects with the block error or failure itself
   */
  readonly fallback?: (
    error: unknown,
    input: string | URL | Request,
    init: RequestInit | undefined,
  ) => Response | Promise<Response>;
}

/** A guarded `fetch`, with the dispatcher it sends through and the interceptor (to `withdraw()` its rules). */
export interface GuardedFetch extends FetchFunction {
  readonly dispatcher: Dispatcher;
  readonly interceptor: FloodgateInterceptor;
}

/**
 * A `fetch` guarded by {@link floodgateInterceptor}, for code that takes a fetch function (SDK
 * clients, tests) rather than the global dispatcher. It rejects with the block error itself
 * (`isBlockError(e)`), or the failure itself, rather than fetch's `TypeError('fetch failed')`,
 * and answers both through `fallback` when given.
 *
 * @throws RuleValidationError when an option is invalid, naming every problem by path.
 * @example
 * const fetch = guardedFetch({
 *   circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 },
 *   fallback: () => Response.json({ items: [] }),
 * });
 * const sdk = new SomeClient({ fetch });
 */
export function guardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const { fetch: given, dispatcher: base, fallback, ...guard } = options;
  const fetchFn: FetchFunction = given ?? globalThis.fetch;
  const interceptor = floodgateInterceptor(guard);
  const dispatcher = (base ?? new Agent()).compose(interceptor);
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    try {
      return await fetchFn(input, { ...init, dispatcher } as unknown as RequestInit);
    } catch (error) {
      const cause = unwrap(error);
      if (fallback === undefined || isAbort(cause, init)) throw cause;
      return fallback(cause, input, init);
    }
  };
  return Object.assign(guarded, { dispatcher, interceptor });
}

/** fetch's `TypeError('fetch failed')` gives way to its cause: the block error or failure. */
function unwrap(error: unknown): unknown {
  if (error instanceof TypeError && error.cause !== undefined) return error.cause;
  return error;
}

/** Whether the call failed because its caller aborted it. */
function isAbort(error: unknown, init: RequestInit | undefined): boolean {
  if (isBlockError(error)) return false;
  const signal = init?.signal ?? undefined;
  return (signal?.aborted === true && error === signal.reason) || (error as Error)?.name === 'AbortError';
}
