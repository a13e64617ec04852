import type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import type { Floodgate } from '../engine/floodgate';
import type { BlockError } from '../kernel/errors';
import type { FlowRuleOptions } from '../flow/flow-rule';
import type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
import type { RateLimitHeadersDraft } from './rate-limit-headers';
import type { ApiGroupPattern } from '../api-group/api-group';
import type { RouteParams } from '../api-group/route-pattern';
import type { KeySourceOptions } from '../kernel/key-source';
import type { Priority } from '../kernel/priority';
import type { HttpPriorityHeaderOptions } from './request-priority';

/** Defaults of the HTTP adapters' options (`resilience()`, the per-route factories, the Fastify plugin). */
export const HTTP_DEFAULTS = Object.freeze({
  /**
   * The form of the IETF `RateLimit-Policy` / `RateLimit` headers sent on blocked responses to
   * QPS rules: draft-8 (named policies), as express-rate-limit's `'draft-8'`.
   */
  headers: 'draft-8',
  /** Whether passing responses carry the RateLimit headers too: no, they describe blocks only. */
  headersOnPass: false,
  /** The least response status the default `isFailure` counts as a failure for circuit breakers. */
  failureStatus: 500,
  /** The media type of block response bodies (RFC 9457 problem details). */
  contentType: 'application/problem+json; charset=utf-8',
  /** The header `wouldBlockHeader: true` sends (it is off unless asked for). */
  wouldBlockHeader: 'Floodgate-Would-Block',
} as const);

/** The RateLimit headers option in its long form: the draft, and whether passing responses carry them. */
export interface RateLimitHeadersOptions {
  /** The form of the headers, or `false` for none. @defaultValue 'draft-8' */
  readonly draft?: RateLimitHeadersDraft | false;
  /**
   * Whether passing responses carry them too, with the quota left, as express-rate-limit sends
   * them: the tightest QPS flow rule (`reject`, counting every caller) of the resources the
   * request entered. Costs a statistics read per request.
   * @defaultValue false
   */
  readonly onPass?: boolean;
}

/**
 * Options every HTTP adapter factory takes. `Req` is the framework's request (Express `req`,
 * Koa `ctx`, Fastify `request`); `F` is the framework's fallback function.
 */
export interface HttpOptions<Req, F> {
  /** The engine that guards the requests. @defaultValue the shared `floodgate` engine */
  readonly floodgate?: Floodgate;
  /**
   * Names the caller, for origin-specific flow rules (`limitOrigin`) and authority rules. A
   * throwing `origin` fails the request through the framework's error handling (500).
   * @defaultValue every caller is `''`
   */
  readonly origin?: (req: Req) => string;
  /**
   * The request's priority under overload (`'critical'`, `'default'`, `'sheddable'`): a function
   * of the request (trusted; `undefined` is `'default'`; a throwing one fails the request, 500), or
   * a header the client sends, `{ header: 'x-priority', max }`: not trusted, an unknown value is
   * `'default'` and no claim rises above `max` (`'default'` unless raised).
   * @defaultValue every request is `'default'`
   */
  readonly priority?: ((req: Req) => Priority | undefined) | HttpPriorityHeaderOptions;
  /** Observes each block before it is answered. A throwing `onBlock` fails the request (500). */
  readonly onBlock?: (error: BlockError, req: Req) => void;
  /**
   * Answers blocked requests instead of the problem+json response (a route's own `fallback`
   * comes first). It must answer the request; if it throws, the framework's error handling
   * answers (500).
   * @defaultValue none: blocks get {@link blockResponse}'s response
   */
  readonly fallback?: F;
  /**
   * The form of the IETF RateLimit headers on blocked responses to QPS rules, or `false` for
   * none (`Retry-After` is always sent where the wait is known); `{ draft, onPass: true }` sends
   * them on passing responses too. By default passing requests are not slowed down to describe
   * quotas.
   * @defaultValue 'draft-8', on blocked responses only
   */
  readonly headers?: RateLimitHeadersDraft | false | RateLimitHeadersOptions;
  /**
   * Whether a finished request counts as failed for circuit breakers, from its status and the
   * error its handler threw (`undefined` when none was seen). Aborted requests are never
   * failures; they exit at the abort. Requests answered by a block are never failures. When
   * several Floodgate middlewares guard one request, the first one's `isFailure` decides.
   * @defaultValue `status >= 500`, or an error was thrown that is not an HTTP 4xx error
   *   (`error.status` or `error.statusCode` within [400, 499])
   */
  readonly isFailure?: (status: number, error: unknown) => boolean;
  /**
   * Names, on a response a rule in shadow (or beyond its `enforcePercent`) let through, the kind
   * of that rule (`Floodgate-Would-Block: flow`): `true` for that header, or a header name of
   * your own. For trying limits out on real traffic (load tests, canaries); off by default, as it
   * tells clients about the limits.
   * @defaultValue false
   */
  readonly wouldBlockHeader?: boolean | string;
  /**
   * The authenticated user, for hotspot rules whose `key` reads `{ from: 'user', name }` (a
   * property or dotted path into what this returns). Guard after authentication, or the user
   * is not there yet (such requests count as the value `''`, all together).
   * @defaultValue Express and Fastify `req.user`, Koa `ctx.state.user`, NestJS `req.user`
   */
  readonly user?: (req: Req) => unknown;
}

/** A flow rule on a route: a flow rule without `resource` (the route names it). */
export type RouteRateLimitOptions = Omit<FlowRuleOptions, 'resource'>;

/** A circuit breaker rule on a route: a breaker rule without `resource` (the route names it). */
export type RouteCircuitBreakerOptions = Omit<CircuitBreakerRuleOptions, 'resource'>;

/**
 * Reads a hotspot rule's value from a request: the framework's request and the route's path
 * parameters.
 */
export type HttpParamReader<Req> = (req: Req, params: RouteParams) => unknown;

/**
 * A hotspot rule on a route: a hotspot rule without `resource`, `paramIndex` and `paramKey`;
 * exactly one of `param` and `key` names the value instead.
 */
export interface RouteHotParamOptions<Req> extends Omit<
  HotParamRuleOptions,
  'resource' | 'paramIndex' | 'paramKey' | 'key'
> {
  /**
   * The value counted: a path parameter's name (`'id'` for `/users/:id`), or a function of the
   * request and its path parameters (`(req) => req.headers['x-user-id']`).
   */
  readonly param?: string | HttpParamReader<Req>;
  /**
   * The value counted, as data (as loaded rules name it): `{ from: 'header', name: 'x-api-key' }`,
   * `{ from: 'ip' }`, ... (see the hotspot rule's `key`).
   */
  readonly key?: KeySourceOptions;
}

/** What guards one route: rules of each kind (one or a list) and a fallback for its blocks. */
export interface RouteOptions<Req, F> {
  /** Flow rules (QPS or concurrency limits). */
  readonly rateLimit?: RouteRateLimitOptions | readonly RouteRateLimitOptions[];
  /** Circuit breaker rules. */
  readonly circuitBreaker?: RouteCircuitBreakerOptions | readonly RouteCircuitBreakerOptions[];
  /** Hotspot rules (per user, per IP, per path parameter). */
  readonly hotParam?: RouteHotParamOptions<Req> | readonly RouteHotParamOptions<Req>[];
  /** Answers this route's blocked requests, before the middleware's own `fallback`. */
  readonly fallback?: F;
  /**
   * Answers a request its handler has not answered (ended the response) this many ms after it
   * was admitted with 503 and a problem body (code `ERR_TIMEOUT`), the timeout recorded then as
   * a failure (and a slow call) for circuit breakers; or with 408, recorded as nothing, when the
   * client is still sending the request. The handler is not stopped: what it sends later is
   * discarded, and the request keeps its concurrency slot until the handler has settled. Timed
   * by the engine's clock; the shortest of a request's routes wins.
   * @defaultValue no timeout
   */
  readonly timeoutMs?: number;
}

/**
 * Options of `resilience()` (Express, Koa) and of the Fastify plugin: the common options and
 * rules by route pattern (see {@link RoutePattern} for the syntax and how requests are read;
 * `'*'` matches every request and expresses a global limit). Every pattern that matches a
 * request applies, in the order given, each as its own resource named by the pattern
 * (`'GET /users/:id'`); a `GET` pattern also guards `HEAD` requests (which the frameworks answer
 * with the GET handler), against the same budget, unless a `HEAD` pattern matches them. The
 * first pattern whose rules refuse a request answers it, and what the request took from the
 * patterns before it is given back.
 */
export interface ResilienceOptions<Req, F> extends HttpOptions<Req, F> {
  /** Rules by route pattern. @defaultValue none */
  readonly routes?: Readonly<Record<string, RouteOptions<Req, F>>>;
  /**
   * Puts every request the framework routes under guard, as the resource of the route it
   * matched, named by the route's template (`'GET /users/:id'`: Express's matched route with its
   * mount paths, @koa/router's layer, Fastify's route), so a rule loaded later for any route
   * takes effect at once; requests no route matches are the one resource
   * {@link UNMATCHED_RESOURCE}. A route with no rule costs an engine lookup.
   * @defaultValue false
   */
  readonly everyRoute?: boolean;
  /**
   * API groups declared in code: each a name, its patterns (route patterns, or `{ method?,
   * regex }`) and, optionally, the rules on the group's resource (one budget for every request
   * of the group). Groups loaded later with the same name replace them.
   * @defaultValue none
   */
  readonly groups?: readonly RouteGroupOptions<Req, F>[];
}

/** An API group in code: its name, its patterns, and the rules (and fallback, timeout) on its resource. */
export interface RouteGroupOptions<Req, F> extends RouteOptions<Req, F> {
  /** The group's resource name (`'checkout'`). */
  readonly name: string;
  /** The requests that belong to the group. */
  readonly patterns: readonly ApiGroupPattern[];
}

/**
 * The resource of requests that no route of the framework matches (404s), when every route is
 * guarded (`everyRoute`): one resource for all of them, whatever their paths.
 */
export const UNMATCHED_RESOURCE = '(unmatched)';

/** Per-route factory options: the common options, one rule's fields, and an optional resource name. */
export type RouteFactoryOptions<Req, F, Rule> = HttpOptions<Req, F> &
  Rule & {
    /**
     * The resource name. @defaultValue the route template, `'GET /users/:id'` (Express: the
     * route's path after its mount paths, `'GET /org/:orgId/users/:id'`; Koa: @koa/router's
     * matched path)
     */
    readonly resource?: string;
    /** As {@link RouteOptions.timeoutMs}, for the route the middleware is used on. @defaultValue no timeout */
    readonly timeoutMs?: number;
  };
