import type { Middleware } from 'koa';
import type { RateLimitOptions } from './koa-options';
import { routeMiddleware } from './route-middleware';

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
