/**
 * `@floodgate/core/http`: what the HTTP adapters (Express, Koa, Fastify, NestJS) are built on.
 * The guard that enters a request's resources and ends them with the request, route patterns
 * and how request paths are read, the one mapping from a block to a response, client
 * identity by IP address, the adapters' option types, what the outbound adapters (undici,
 * gRPC clients) share to retry within a budget, and how a call's priority is read from outside
 * (a caller's claim capped, an application function's answer checked), which gRPC shares, how
 * a bad option's value is shown in an error message (`show`), and timers on the engine's clock
 * that cancel without an `AbortController` (`scheduleOn`).
 * @packageDocumentation
 */
export {
  blockResponse,
  requestTimeoutResponse,
  timeoutResponse,
  type BlockResponse,
  type BlockResponseOptions,
  type ProblemDetails,
} from './block-response';
export { rateLimitHeaders, quotaHeaders, MAX_HEADER_VALUE, type RateLimitHeadersDraft } from './rate-limit-headers';
export type { Refusal, QuotaPolicy } from '../kernel/errors';
export { MAX_DURATION_MS, show } from '../kernel/rule-reader';
export type { ResourceInfo } from '../engine/resource-state';
export { RoutePattern, requestPath, foldCase, type RouteParams, type PathMatching } from '../api-group/route-pattern';
export { HTTP_DEFAULTS, UNMATCHED_RESOURCE } from './http-options';
export type {
  HttpOptions,
  HttpParamReader,
  RateLimitHeadersOptions,
  ResilienceOptions,
  RouteOptions,
  RouteFactoryOptions,
  RouteRateLimitOptions,
  RouteCircuitBreakerOptions,
  RouteHotParamOptions,
  RouteGroupOptions,
} from './http-options';
export type { HttpRequestReader, NodeRequestLike } from './request-keys';
export type { HttpPriorityHeaderOptions } from './request-priority';
export { isPriority, PRIORITIES, type Priority } from '../kernel/priority';
export { claimedPriority, givenPriority } from '../kernel/priority-claim';
export { KEY_SOURCE_DEFAULTS, MANY_VALUES, keySourceId } from '../kernel/key-source';
export { API_GROUP_DEFAULTS } from '../api-group/api-group';
export {
  compileLinearRegex,
  MAX_REGEX_INPUT,
  MAX_REGEX_LENGTH,
  MAX_REGEX_STATES,
  type LinearRegex,
} from '../kernel/linear-regex';
export { defaultIsFailure, type RouteRuleOption } from './normalize-options';
export { HttpGuard, type GuardVerdict, type MatchedRoute } from './http-guard';
export { templateParamNames, type RoutePolicy } from './route-policy';
export type { HttpResponseLike, HttpSocketLike } from './guarded-request';
export { ipAddressKey, IP_KEY_DEFAULTS, type IpKeyOptions } from './ip-key';
export { retryDelayMs, retryBudgetAllows, KeepAlive, type RetryBackoff } from './outbound-retry';
export { scheduleOn } from '../kernel/clock';
