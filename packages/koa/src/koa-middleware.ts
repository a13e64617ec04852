import { isBlockError, type BlockError } from '@floodgate/core';
import {
  HttpGuard,
  ipAddressKey,
  type GuardVerdict,
  type HttpRequestReader,
  type IpKeyOptions,
  type MatchedRoute,
  type RouteParams,
} from '@floodgate/core/http';
import type { Context, Middleware, Next } from 'koa';
import type {
  BlockErrorHandlerOptions,
  CircuitBreakerOptions,
  HotParamOptions,
  KoaFallback,
  RateLimitOptions,
  ResilienceOptions,
} from './koa-options';

type Guard = HttpGuard<Context, KoaFallback>;
const GUARD = Symbol('floodgate.routeGuard');
const NO_PARAMS: RouteParams = Object.freeze({});

/** How the HTTP layer reads a Koa request: `ctx.ip` (per `app.proxy`), `ctx.query`, `ctx.state.user`. */
const KOA_READER: HttpRequestReader<Context> = {
  ip: (ctx) => ctx.ip,
  query: (ctx) => ctx.query,
  user: (ctx) => (ctx.state as { readonly user?: unknown } | undefined)?.user,
};

/** What @koa/router keeps of a route: its template (prefix included), methods and matchers. */
interface RouterLayer {
  readonly path: string;
  readonly methods: readonly string[];
  readonly paramNames: readonly unknown[];
  captures(path: string): string[];
  params(path: string, captures: string[], existing?: RouteParams): RouteParams;
}

/** What a @koa/router router offers for finding the route a request will be dispatched to. */
interface KoaRouter {
  readonly opts: { readonly routerPath?: string; readonly exclusive?: boolean | 'specificity' };
  readonly exclusive?: boolean;
  matchHost(host: string): boolean;
  match(path: string, method: string): { readonly pathAndMethod: readonly RouterLayer[]; readonly route: boolean };
}

/** What @koa/router puts on the context: the matched template, its params and layers. */
interface RouterContext {
  readonly routerPath?: string;
  readonly params?: RouteParams;
  readonly matched?: readonly {
    readonly path: string;
    readonly methods: readonly string[];
    readonly stack: readonly { [GUARD]?: Guard }[];
  }[];
}

/**
 * Middleware that guards requests by route pattern, before routing: each pattern matching a
 * request (`'*'` matches every request: a global limit) is a resource named by the pattern,
 * checked in order; paths are matched as @koa/router routes them by default (case-insensitive;
 * `HEAD` as `GET`). It is also the block mapping: a `BlockError` thrown downstream (a
 * decorated service method) is answered like its own blocks. Flow and hotspot blocks answer
 * 429, an open circuit 503, as `blockResponse()` shapes them, unless a `fallback` answers.
 * Mount it first.
 *
 * @throws RuleValidationError when an option, pattern or rule is invalid (naming it).
 * @example
 * app.use(resilience({
 *   routes: {
 *     '*': { rateLimit: { threshold: 1000 } },
 *     'GET /users/:id': { hotParam: { param: 'id', threshold: 5 } },
 *   },
 * }));
 */
export function resilience(options?: ResilienceOptions): Middleware {
  const guard = HttpGuard.resilience<Context, KoaFallback>(
    options,
    'resilience()',
    { caseSensitive: false },
    KOA_READER,
  );
  return function floodgateResilience(ctx: Context, next: Next): Promise<void> {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      const route = guard.everyRoute ? matchedRoute(guard, ctx) : undefined;
      verdict = guard.guardRoutes(ctx.res, ctx, ctx.method, ctx.originalUrl, false, route);
    } catch (err) {
      return Promise.reject(err);
    }
    return proceed(guard, verdict, ctx, next, true);
  };
}

/**
 * The route the app's @koa/router routers will dispatch the request to, found before routing
 * with the routers' own matching (`router.match()`, in the order the routers are mounted on the
 * app, each only for its host): the first route layer the request runs, named by its template
 * (`'GET /users/:id'`, the router's prefix included; `HEAD` on a `GET` route as `GET`); else the
 * unmatched resource. Routers mounted inside other middleware (koa-mount) are not seen.
 */
function matchedRoute(guard: Guard, ctx: Context): MatchedRoute {
  for (const fn of ctx.app.middleware as readonly { readonly router?: KoaRouter }[]) {
    const router = fn.router;
    if (router === undefined || !router.matchHost(ctx.host)) continue;
    const path = router.opts.routerPath || ctx.path;
    const found = router.match(path, ctx.method);
    if (!found.route) continue;
    const layer = routeLayer(router, found.pathAndMethod);
    if (layer === undefined) continue;
    const method = ctx.method === 'HEAD' && layer.methods.includes('GET') ? 'GET' : ctx.method;
    const policy = guard.everyRoutePolicy(method, layer.path);
    const params = policy.readsParams ? layer.params(path, layer.captures(path), {}) : NO_PARAMS;
    return { policy, params };
  }
  return { policy: guard.unmatchedPolicy, params: NO_PARAMS };
}

/** The route layer that answers first: the first matched (or the one an exclusive router picks). */
function routeLayer(router: KoaRouter, layers: readonly RouterLayer[]): RouterLayer | undefined {
  let candidates = layers;
  if (router.exclusive === true) {
    let chosen: RouterLayer | undefined;
    if (router.opts.exclusive === 'specificity') {
      for (const layer of layers)
        if (chosen === undefined || layer.paramNames.length < chosen.paramNames.length) chosen = layer;
    } else chosen = layers[layers.length - 1];
    candidates = chosen === undefined ? [] : [chosen];
  }
  return candidates.find((layer) => layer.methods.length > 0);
}

/**
 * @koa/router route middleware with a flow rule (QPS or concurrency limit) on the route it is used on.
 * Blocks answer 429 with `Retry-After` and RateLimit headers, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * router.get('/search', rateLimit({ threshold: 20 }), search);
 */
export function rateLimit(options: RateLimitOptions): Middleware {
  return routeMiddleware('rateLimit', options);
}

/**
 * @koa/router route middleware with a circuit breaker on the route it is used on. A request fails when its
 * handler throws or answers >= 500 (`isFailure`), and is slow by its time to the handler's
 * answer (the response ended, not read: a client slow to read is no slow call). While open, requests answer 503 with `Retry-After`, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * router.get('/feed', circuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000,
 *   fallback: (ctx) => { ctx.body = cachedFeed; } }), feed);
 */
export function circuitBreaker(options: CircuitBreakerOptions): Middleware {
  return routeMiddleware('circuitBreaker', options);
}

/**
 * @koa/router route middleware with a hotspot rule on the route it is used on: a limit per value of
 * `param` (a path parameter's name, or a function of the request such as {@link ipKey}), with
 * per-value overrides in `specificItems`. Blocks answer 429, unless `fallback` answers. A
 * `param` naming no parameter of the route fails its requests (500) with a `RuleValidationError`.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * router.get('/users/:id', hotParam({ param: 'id', threshold: 5, specificItems: { admin: 50 } }), getUser);
 */
export function hotParam(options: HotParamOptions): Middleware {
  return routeMiddleware('hotParam', options);
}

/**
 * The block mapping alone, for apps without {@link resilience}: middleware that answers a
 * `BlockError` thrown downstream (a decorated service method) as the Floodgate middleware
 * answer theirs, and rethrows every other error. Mount it first.
 *
 * @throws RuleValidationError when an option is invalid (naming it).
 * @example
 * app.use(blockErrorHandler());
 */
export function blockErrorHandler(options?: BlockErrorHandlerOptions): Middleware {
  const guard = HttpGuard.answering<Context, KoaFallback>(options, 'blockErrorHandler()');
  return function floodgateBlockErrorHandler(ctx: Context, next: Next): Promise<void> {
    return proceed(guard, undefined, ctx, next, true);
  };
}

/**
 * The client's address as a rate-limit key: `ctx.ip` (which follows `app.proxy` and
 * `app.maxIpsCount`), IPv4-mapped IPv6 read as IPv4, IPv6 grouped by its /56 (`ipv6Subnet`).
 * Use it as `origin` or as a hotspot `param`.
 * @throws RangeError when `ipv6Subnet` is not an integer within [1, 128] or `false`.
 * @example
 * app.proxy = true; app.maxIpsCount = 1; // one proxy in front: ctx.ip is the address it saw
 * app.use(resilience({ routes: { 'POST /login': { hotParam: { param: ipKey, threshold: 5 } } } }));
 */
export function ipKey(ctx: Context, options?: IpKeyOptions): string {
  return ipAddressKey(ctx.ip, options);
}

/**
 * A per-route middleware guarding the @koa/router route it is used on, whose resource is
 * `METHOD routerPath` (`HEAD` on a `GET` route is its `GET`). The first time it sees a route,
 * it declares the rules of every Floodgate middleware on that route, so stacked ones share
 * one entry from the first request.
 */
function routeMiddleware(option: 'rateLimit' | 'circuitBreaker' | 'hotParam', options: unknown): Middleware {
  const guard = HttpGuard.route<Context, KoaFallback>(option, options, `${option}()`, KOA_READER);
  const middleware = function floodgateRoute(ctx: Context, next: Next): Promise<void> {
    const { routerPath, params, matched } = ctx as unknown as RouterContext;
    const layer = matched?.find((l) => l.stack.includes(middleware as { [GUARD]?: Guard }));
    const method = ctx.method === 'HEAD' && layer?.methods.includes('GET') === true ? 'GET' : ctx.method;
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      if (routerPath !== undefined && layer !== undefined && guard.isNewRoute(method, routerPath)) {
        for (const fn of layer.stack) fn[GUARD]?.routePolicy(method, routerPath, params);
      }
      verdict = guard.guardRoute(ctx.res, ctx, guard.routePolicy(method, routerPath, params), params ?? NO_PARAMS);
    } catch (err) {
      return Promise.reject(err);
    }
    return proceed(guard, verdict, ctx, next, false);
  };
  return Object.assign(middleware, { [GUARD]: guard });
}

/** Answers a block with the fallback, else the problem response. What throws goes to Koa's error handling. */
async function answerBlock(guard: Guard, error: BlockError, ctx: Context): Promise<void> {
  const fallback = guard.answer(ctx.res, ctx, error);
  if (fallback !== undefined) {
    await fallback(ctx, error);
    return;
  }
  const { status, headers, json } = guard.respond(error);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = json;
}

/**
 * Goes on to `next()` when the request passed, answers a block, or does nothing for a client
 * that left. Downstream, a `BlockError` is answered when `answerDeeper` (the block mapping) and
 * rethrown otherwise; any other error is recorded for circuit breakers and rethrown. For a
 * request with a timeout, core is told when `next()` settles: a request its timeout answered
 * keeps its slot until then.
 */
async function proceed(
  guard: Guard,
  verdict: GuardVerdict | Promise<GuardVerdict>,
  ctx: Context,
  next: Next,
  answerDeeper: boolean,
): Promise<void> {
  if (verdict instanceof Promise) verdict = await verdict;
  if (verdict === 'aborted') return;
  if (verdict !== undefined) return answerBlock(guard, verdict, ctx);
  const watched = guard.handlerStarts(ctx.res);
  try {
    await next();
  } catch (err) {
    if (!isBlockError(err)) guard.traceError(ctx.res, err);
    else if (answerDeeper && !ctx.headerSent) return answerBlock(guard, err, ctx);
    throw err;
  } finally {
    if (watched) guard.handlerSettled(ctx.res);
  }
}
