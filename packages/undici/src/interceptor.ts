import { floodgate as sharedEngine } from '@floodgate/core';
import { KeepAlive } from '@floodgate/core/http';
import type { Dispatcher } from 'undici';
import { Deadlines } from './deadlines';
import { GuardedCall, type CallContext } from './guarded-call';
import { resolveOptions, type FloodgateInterceptorOptions } from './outbound-options';
import { hostKey, OutboundResources } from './outbound-resources';

/** An undici interceptor that guards every call through the Floodgate engine, with `withdraw()`. */
export interface FloodgateInterceptor extends Dispatcher.DispatcherComposeInterceptor {
  /** Withdraws the rules the interceptor declared in the engine (its calls then go unguarded by them). */
  withdraw(): void;
}

/**
 * An undici interceptor guarding outbound HTTP: each host is a resource (`api.example.com`, with
 * `:port` when it is neither 80 nor 443), each route listed for a host is one
 * (`GET api.example.com/users/:id`), and every other path folds into its host's, so the number of
 * resources is bounded whatever URLs are called. Per resource, as the options say: a circuit
 * breaker, a bulkhead, retries (idempotent requests, full-jitter backoff, `Retry-After`) within a
 * retry budget, upstream pushback, client-side adaptive throttling, hedging and timeouts, each
 * an ordinary engine rule, declared from the options (rules loaded for the resource take
 * precedence). A refused call fails with the engine's block error (`isBlockError`); with
 * `fetch()`, that error is the `cause` of fetch's `TypeError`. Upgrades and `CONNECT` pass
 * through unguarded.
 *
 * @throws RuleValidationError when an option is invalid, naming every problem by path.
 * @example
 * import { Agent, setGlobalDispatcher } from 'undici';
 * setGlobalDispatcher(new Agent().compose(floodgateInterceptor({
 *   circuitBreaker: { strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000 },
 *   hosts: { 'api.example.com': { maxConcurrency: 20, timeoutMs: 2000, routes: { 'GET /users/:id': {} } } },
 * })));
 * await fetch('https://api.example.com/users/42');   // guarded as "GET api.example.com/users/:id"
 */
export function floodgateInterceptor(options: FloodgateInterceptorOptions = {}): FloodgateInterceptor {
  const resolved = resolveOptions(options, hostKey);
  const fg = options.floodgate ?? sharedEngine;
  const resources = new OutboundResources(fg, resolved);
  const keepAlive = new KeepAlive();
  const deadlines = new Deadlines(fg.clock);
  const interceptor = (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch => {
    const ctx: CallContext = { fg, dispatch, wallNow: Date.now, keepAlive, deadlines };
    return function floodgateDispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler);
      const guarded = resources.resolve(opts.origin, opts.method, opts.path);
      if (guarded === undefined) return dispatch(opts, handler);
      return new GuardedCall(ctx, guarded, opts, handler).start();
    };
  };
  return Object.assign(interceptor, { withdraw: () => resources.withdraw() });
}
