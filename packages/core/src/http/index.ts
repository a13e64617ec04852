export { blockResponse, type BlockResponse, type BlockResponseOptions, type ProblemDetails } from './block-response';
export { rateLimitHeaders, type RateLimitHeadersDraft } from './rate-limit-headers';
export type { ResourceInfo } from '../engine/resource-state';
export { RoutePattern, type RouteParams } from './route-pattern';
export { HTTP_DEFAULTS } from './http-defaults';
export type {
  HttpOptions,
  HttpParamReader,
  ResilienceOptions,
  RouteOptions,
  RouteFactoryOptions,
  RouteRateLimitOptions,
  RouteCircuitBreakerOptions,
  RouteHotParamOptions,
} from './http-options';
export { defaultIsFailure } from './normalize-http-options';
export { HttpGuard, type GuardVerdict } from './http-guard';
export type { RoutePolicy } from './route-policy';
export type { HttpResponseLike } from './guarded-request';
