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
import type { Request, Response } from 'express';

/** Answers a blocked request instead of the 429/503 problem response; it must send a response. */
export type ExpressFallback = (req: Request, res: Response, error: BlockError) => unknown;

/** Options of {@link resilience}: rules by route pattern (`'*'` for every request) and the common options. */
export type ResilienceOptions = CoreResilienceOptions<Request, ExpressFallback>;
/** Options of {@link rateLimit}: a flow rule's fields and the common options. */
export type RateLimitOptions = RouteFactoryOptions<Request, ExpressFallback, RouteRateLimitOptions>;
/** Options of {@link circuitBreaker}: a circuit breaker rule's fields and the common options. */
export type CircuitBreakerOptions = RouteFactoryOptions<Request, ExpressFallback, RouteCircuitBreakerOptions>;
/** Options of {@link hotParam}: a hotspot rule's fields, `param`, and the common options. */
export type HotParamOptions = RouteFactoryOptions<Request, ExpressFallback, RouteHotParamOptions<Request>>;
/** Options of {@link blockErrorHandler}. */
export type BlockErrorHandlerOptions = Pick<
  HttpOptions<Request, ExpressFallback>,
  'floodgate' | 'onBlock' | 'fallback' | 'headers'
>;
/** Options of {@link ipKey}. */
export type IpKeyOptions = CoreIpKeyOptions;
