import type { BlockError } from '@floodgate/core';
import type {
  HttpOptions,
  IpKeyOptions as CoreIpKeyOptions,
  ResilienceOptions as CoreResilienceOptions,
  RouteCircuitBreakerOptions,
  RouteFactoryOptions,
  RouteHotParamOptions,
  RouteRateLimitOptions,
} from '@floodgate/core/http';
import type { Context } from 'koa';

/** Answers a blocked request instead of the 429/503 problem response (sets `ctx.status` and `ctx.body`). */
export type KoaFallback = (ctx: Context, error: BlockError) => unknown;

/** Options of {@link resilience}: rules by route pattern (`'*'` for every request) and the common options. */
export type ResilienceOptions = CoreResilienceOptions<Context, KoaFallback>;
/** Options of {@link rateLimit}: a flow rule's fields and the common options. */
export type RateLimitOptions = RouteFactoryOptions<Context, KoaFallback, RouteRateLimitOptions>;
/** Options of {@link circuitBreaker}: a circuit breaker rule's fields and the common options. */
export type CircuitBreakerOptions = RouteFactoryOptions<Context, KoaFallback, RouteCircuitBreakerOptions>;
/** Options of {@link hotParam}: a hotspot rule's fields, `param`, and the common options. */
export type HotParamOptions = RouteFactoryOptions<Context, KoaFallback, RouteHotParamOptions<Context>>;
/** Options of {@link blockErrorHandler}. */
export type BlockErrorHandlerOptions = Pick<
  HttpOptions<Context, KoaFallback>,
  'floodgate' | 'onBlock' | 'fallback' | 'headers'
>;
/** Options of {@link ipKey}. */
export type IpKeyOptions = CoreIpKeyOptions;
