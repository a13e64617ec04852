import type { RequestHandler } from 'express';
import type { HotParamOptions } from './express-options';
import { routeMiddleware } from './route-middleware';

/**
 * Route middleware with a hotspot rule on the route it is used on: a limit per value of
 * `param` (a path parameter's name, or a function of the request), with per-value overrides in
 * `specificItems`. Blocks answer 429, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * app.get('/users/:id', hotParam({ param: 'id', threshold: 5, specificItems: { admin: 50 } }), getUser);
 */
export function hotParam(options: HotParamOptions): RequestHandler {
  return routeMiddleware('hotParam', options);
}
