import { HttpGuard, type RouteParams } from '@floodgate/core/http';
import type { Context, Middleware, Next } from 'koa';
import { proceed } from './answer-block';
import type { KoaFallback } from './koa-options';

type Guard = HttpGuard<Context, KoaFallback>;
const GUARD = Symbol('floodgate.routeGuard');
const NO_PARAMS: RouteParams = Object.freeze({});

/** What @koa/router puts on the context. */
interface RouterContext {
  readonly routerPath?: string;
  readonly params?: RouteParams;
  readonly matched?: readonly { readonly path: string; readonly stack: readonly { [GUARD]?: Guard }[] }[];
}

/**
 * A per-route middleware guarding the @koa/router route it is used on, whose resource is
 * `METHOD routerPath`. The first time it sees a route, it declares the rules of every Floodgate
 * middleware on that route, so stacked ones share one entry from the first request.
 */
export function routeMiddleware(option: 'rateLimit' | 'circuitBreaker' | 'hotParam', options: unknown): Middleware {
  const guard = HttpGuard.route<Context, KoaFallback>(option, options, `${option}()`);
  const middleware = function floodgateRoute(ctx: Context, next: Next): Promise<void> {
    const { routerPath, params, matched } = ctx as unknown as RouterContext;
    if (routerPath !== undefined && matched !== undefined && guard.isNewRoute(ctx.method, routerPath)) {
      for (const layer of matched) if (layer.path === routerPath) for (const fn of layer.stack) fn[GUARD]?.routePolicy(ctx.method, routerPath);
    }
    return proceed(guard, guard.guardRoute(ctx.res, ctx, guard.routePolicy(ctx.method, routerPath), params ?? NO_PARAMS), ctx, next, false);
  };
  return Object.assign(middleware, { [GUARD]: guard });
}
