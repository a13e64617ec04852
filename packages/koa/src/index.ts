export { resilience } from './resilience';
export { rateLimit } from './rate-limit';
export { circuitBreaker } from './circuit-breaker';
export { hotParam } from './hot-param';
export { blockErrorHandler } from './block-error-handler';
export type {
  KoaFallback,
  ResilienceOptions,
  RateLimitOptions,
  CircuitBreakerOptions,
  HotParamOptions,
  BlockErrorHandlerOptions,
} from './koa-options';
