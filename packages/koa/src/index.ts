export { resilience, rateLimit, circuitBreaker, hotParam, blockErrorHandler, ipKey } from './koa-middleware';
export type {
  KoaFallback,
  ResilienceOptions,
  RateLimitOptions,
  CircuitBreakerOptions,
  HotParamOptions,
  BlockErrorHandlerOptions,
  IpKeyOptions,
} from './koa-options';
