import type { Middleware } from 'koa';
import type { HotParamOptions } from './koa-options';
import { routeMiddleware } from './route-middleware';

/**
 * @koa/router route middleware with a hotspot rule on the route it is used on: a limit per value of
 * `param` (a path parameter's name, or a function of the request), with per-value overrides in
 * `specificItems`. Blocks answer 429, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * router.get('/users/:id', hotParam({ param: 'id', threshold: 5, specificItems: { admin: 50 } }), getUser);
 */
export function hotParam(options: HotParamOptions): Middleware {
  return routeMiddleware('hotParam', options);
}
