import type { RequestHandler } from 'express';
import type { RateLimitOptions } from './express-options';
import { routeMiddleware } from './route-middleware';

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
