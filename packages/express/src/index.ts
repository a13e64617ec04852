export { resilience, rateLimit, circuitBreaker, hotParam, blockErrorHandler, ipKey } from './express-middleware';
export type {
  ExpressFallback,
  ResilienceOptions,
  RateLimitOptions,
  CircuitBreakerOptions,
  HotParamOptions,
  BlockErrorHandlerOptions,
  IpKeyOptions,
} from './express-options';
