import { HttpGuard, type GuardVerdict, type RouteParams } from '@floodgate/core/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { settle } from './answer-block';
import type { ExpressFallback } from './express-options';

type Guard = HttpGuard<Request, ExpressFallback>;
const GUARD = Symbol('floodgate.routeGuard');

interface ExpressRoute {
  readonly path: unknown;
  readonly stack: readonly { readonly handle: { [GUARD]?: Guard } }[];
}

/**
 * A per-route middleware guarding the route it is used on (`req.route`), whose resource is
 * `METHOD baseUrl+path`. The first time it sees a route, it declares the rules of every
 * Floodgate middleware on that route, so stacked ones share one entry from the first request.
 */
export function routeMiddleware(option: 'rateLimit' | 'circuitBreaker' | 'hotParam', options: unknown): RequestHandler {
  const guard = HttpGuard.route<Request, ExpressFallback>(option, options, `${option}()`);
  const middleware = function floodgateRoute(req: Request, res: Response, next: NextFunction): void {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      const route = req.route as ExpressRoute | undefined;
      const template = route === undefined ? undefined : req.baseUrl + String(route.path);
      if (template !== undefined && guard.isNewRoute(req.method, template)) {
        for (const layer of route!.stack) layer.handle[GUARD]?.routePolicy(req.method, template);
      }
      verdict = guard.guardRoute(res, req, guard.routePolicy(req.method, template), req.params as RouteParams);
    } catch (err) {
      return next(err);
    }
    settle(guard, verdict, req, res, next);
  };
  return Object.assign(middleware, { [GUARD]: guard });
}
