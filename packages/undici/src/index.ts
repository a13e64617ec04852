/**
 * `@floodgate/undici`: outbound HTTP guarded at undici's dispatcher. `floodgateInterceptor()` for
 * `Agent#compose()` (and so `setGlobalDispatcher()`, which Node's global `fetch` uses) and
 * `guardedFetch()` for code that takes a fetch function: per-host circuit breakers, bulkheads,
 * timeouts, retries within a retry budget, upstream pushback, client-side adaptive throttling and
 * hedging, as ordinary Floodgate rules.
 * @packageDocumentation
 */
export { floodgateInterceptor, type FloodgateInterceptor } from './interceptor';
export { guardedFetch, type GuardedFetch, type GuardedFetchOptions, type FetchFunction } from './guarded-fetch';
export { hostKey } from './outbound-resources';
export { UpstreamStatusError } from './guarded-call';
export {
  OUTBOUND_DEFAULTS,
  type FloodgateInterceptorOptions,
  type OutboundPolicy,
  type HostPolicy,
  type RetryOptions,
  type HedgeOptions,
  type QueueOptions,
} from './outbound-options';
