import { isBlockError, type BlockError } from '@floodgate/core';
import {
  HttpGuard,
  ipAddressKey,
  type GuardVerdict,
  type IpKeyOptions,
  type MatchedRoute,
  type RouteParams,
} from '@floodgate/core/http';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type {
  BlockErrorHandlerOptions,
  CircuitBreakerOptions,
  ExpressFallback,
  HotParamOptions,
  RateLimitOptions,
  ResilienceOptions,
} from './express-options';
import { findRoute } from './route-match';
import { routeTemplate } from './route-template';

type Guard = HttpGuard<Request, ExpressFallback>;
const GUARD = Symbol('floodgate.routeGuard');

/** What Express 5 keeps of the route a request matched (`req.route`). */
interface ExpressRoute {
  readonly path: unknown;
  readonly methods: { readonly head?: boolean };
  readonly stack: readonly { readonly handle: { [GUARD]?: Guard } }[];
}

/**
 * App-level middleware that guards requests by route pattern before Express routes them. Each
 * pattern matching a request (`'*'` matches every request: a global limit) is a resource named
 * by the pattern, checked in order; flow and hotspot blocks answer 429, an open circuit 503,
 * as `blockResponse()` shapes them, unless a `fallback` answers. Patterns match the full path
 * (`req.originalUrl`) as Express routes it (letter case per the app's `case sensitive
 * routing`; `HEAD` as `GET`), so mount it at the app's root. With `everyRoute: true`, every
 * request is also entered as the route Express will dispatch it to (`'GET /users/:id'`, its
 * mount paths included; found with the routers' own matchers before routing), or as
 * `'(unmatched)'` when no route matches; with `groups`, or API groups loaded later, as each
 * group it belongs to. Mount it after authentication when rules read `{ from: 'user' }`.
 *
 * @throws RuleValidationError when an option, pattern or rule is invalid (naming it).
 * @example
 * app.use(resilience({
 *   routes: {
 *     '*': { rateLimit: { threshold: 1000 } },
 *     'GET /users/:id': { hotParam: { param: 'id', threshold: 5 } },
 *   },
 *   origin: ipKey,
 * }));
 */
export function resilience(options?: ResilienceOptions): RequestHandler {
  const guard = HttpGuard.resilience<Request, ExpressFallback>(options, 'resilience()');
  // The app's `case sensitive routing`, read once per app. The app is known by the request's
  // prototype (its `app.request`): reading `req.app` would cost more, as every property read on
  // Express's requests misses V8's caches (Express swaps their prototypes).
  let appRequest: unknown;
  let sensitive = false;
  return function floodgateResilience(req: Request, res: Response, next: NextFunction): void {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      const proto: unknown = Object.getPrototypeOf(req);
      if (proto !== appRequest) {
        appRequest = proto;
        sensitive = caseSensitive(req);
      }
      const route = guard.everyRoute ? matchedRoute(guard, req) : undefined;
      verdict = guard.guardRoutes(res, req, req.method, req.originalUrl, sensitive, route);
    } catch (err) {
      return next(err);
    }
    settle(guard, verdict, req, res, next);
  };
}

/**
 * Route middleware with a flow rule (QPS or concurrency limit) on the route it is used on.
 * Blocks answer 429 with `Retry-After` and RateLimit headers, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * app.get('/search', rateLimit({ threshold: 20 }), search);
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  return routeMiddleware('rateLimit', options);
}

/**
 * Route middleware with a circuit breaker on the route it is used on. A request fails when its
 * handler throws or answers >= 500 (`isFailure`), and is slow by its time to the handler's
 * answer (the response ended, not read: a client slow to read is no slow call). While open, requests answer 503 with `Retry-After`, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * app.get('/feed', circuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000,
 *   fallback: (req, res) => res.json(cachedFeed) }), feed);
 */
export function circuitBreaker(options: CircuitBreakerOptions): RequestHandler {
  return routeMiddleware('circuitBreaker', options);
}

/**
 * Route middleware with a hotspot rule on the route it is used on: a limit per value of
 * `param` (a path parameter's name, or a function of the request such as {@link ipKey}), with
 * per-value overrides in `specificItems`. Blocks answer 429, unless `fallback` answers. A
 * `param` naming no parameter of the route fails its requests (500) with a `RuleValidationError`.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * app.get('/users/:id', hotParam({ param: 'id', threshold: 5, specificItems: { admin: 50 } }), getUser);
 */
export function hotParam(options: HotParamOptions): RequestHandler {
  return routeMiddleware('hotParam', options);
}

/**
 * Error middleware that answers a `BlockError` thrown deeper (a decorated service method, an
 * `fg.entry()` in a handler) exactly as the middleware answer theirs; every other error goes
 * on to `next(err)`, after being recorded for circuit breakers. Mount it after the routes.
 *
 * @throws RuleValidationError when an option is invalid (naming it).
 * @example
 * app.use(blockErrorHandler());
 */
export function blockErrorHandler(options?: BlockErrorHandlerOptions): ErrorRequestHandler {
  const guard = HttpGuard.answering<Request, ExpressFallback>(options, 'blockErrorHandler()');
  return function floodgateBlockErrorHandler(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (!isBlockError(err)) {
      guard.traceError(res, err);
      return next(err);
    }
    if (res.headersSent) return next(err);
    answerBlock(guard, err, req, res, next);
  };
}

/**
 * The client's address as a rate-limit key: `req.ip` (which follows the app's `trust proxy`
 * setting), IPv4-mapped IPv6 read as IPv4, IPv6 grouped by its /56 (`ipv6Subnet`). Use it as
 * `origin` or as a hotspot `param`.
 * @throws RangeError when `ipv6Subnet` is not an integer within [1, 128] or `false`.
 * @example
 * app.set('trust proxy', 1); // one proxy in front: req.ip is the address it saw
 * app.use(resilience({ routes: { 'POST /login': { hotParam: { param: ipKey, threshold: 5 } } } }));
 */
export function ipKey(req: Request, options?: IpKeyOptions): string {
  return ipAddressKey(req.ip, options);
}

/** The route Express will dispatch the request to, or the unmatched resource. */
function matchedRoute(guard: Guard, req: Request): MatchedRoute {
  if (req.baseUrl !== '' && (req.app as { readonly parent?: unknown }).parent === undefined) {
    throw new TypeError(
      `resilience({ everyRoute: true }) must be mounted at the app's root (app.use(resilience(...))), not under "${req.baseUrl}"`,
    );
  }
  const found = findRoute(req);
  return found === undefined
    ? { policy: guard.unmatchedPolicy, params: {} }
    : { policy: guard.everyRoutePolicy(found.method, found.template), params: found.params };
}

/** Whether the app routes letter case apart (its `case sensitive routing` setting); false outside an app (a bare router). */
function caseSensitive(req: Request): boolean {
  const app = req.app as { readonly settings?: Record<string, unknown> } | undefined;
  return Boolean(app?.settings?.['case sensitive routing']);
}

/**
 * A per-route middleware guarding the route it is used on (`req.route`), whose resource is
 * `METHOD template`, the route's template with its mount paths (`GET /org/:orgId/users/:id`,
 * never the concrete `req.baseUrl`; see {@link routeTemplate}), unless it was given a
 * `resource`. `HEAD` on a route without a `HEAD` handler is its `GET`. The first time it sees a
 * route, it declares the rules of every Floodgate middleware on that route, so stacked ones
 * share one entry from the first request.
 */
function routeMiddleware(option: 'rateLimit' | 'circuitBreaker' | 'hotParam', options: unknown): RequestHandler {
  const name = `${option}()`;
  const guard = HttpGuard.route<Request, ExpressFallback>(option, options, name);
  // Validated above: a middleware given a resource needs no template (nor a route).
  const named = (options as { readonly resource?: unknown } | undefined)?.resource !== undefined;
  const middleware = function floodgateRoute(req: Request, res: Response, next: NextFunction): void {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      const route = req.route as ExpressRoute | undefined;
      const template = route === undefined || named ? undefined : routeTemplate(req, route, name);
      const method = req.method === 'HEAD' && route?.methods.head !== true ? 'GET' : req.method;
      const params = req.params as RouteParams;
      if (template !== undefined && guard.isNewRoute(method, template.text)) {
        for (const layer of route!.stack)
          layer.handle[GUARD]?.routePolicy(method, template.text, params, template.paramNames);
      }
      verdict = guard.guardRoute(
        res,
        req,
        guard.routePolicy(method, template?.text, params, template?.paramNames),
        params,
      );
    } catch (err) {
      return next(err);
    }
    settle(guard, verdict, req, res, next);
  };
  return Object.assign(middleware, { [GUARD]: guard });
}

/**
 * Goes on (`next()`), answers a block, or does nothing for a client that left. Express gives no
 * sign of when the handlers it goes on to are done: for a request with a timeout, core takes the
 * handler's own (late) `res.end()`, or an error reaching `blockErrorHandler()`, as that sign.
 */
function settle(
  guard: Guard,
  verdict: GuardVerdict | Promise<GuardVerdict>,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  if (verdict === undefined) {
    guard.handlerStarts(res);
    return next();
  }
  if (verdict instanceof Promise) {
    verdict.then((v) => settle(guard, v, req, res, next), next);
    return;
  }
  if (verdict !== 'aborted') answerBlock(guard, verdict, req, res, next);
}

/**
 * Answers a block with the fallback, else the problem response, written as it is (no ETag or
 * freshness check: a 429 costs little); what throws goes to `next(err)`.
 */
function answerBlock(guard: Guard, error: BlockError, req: Request, res: Response, next: NextFunction): void {
  try {
    const fallback = guard.answer(res, req, error);
    if (fallback !== undefined) {
      const result = fallback(req, res, error);
      if (result instanceof Promise) result.then(undefined, next);
      return;
    }
    const { status, headers, json } = guard.respond(error);
    res.writeHead(status, headers);
    res.end(json);
  } catch (err) {
    next(err);
  }
}
