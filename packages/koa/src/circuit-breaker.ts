import type { Middleware } from 'koa';
import type { CircuitBreakerOptions } from './koa-options';
import { routeMiddleware } from './route-middleware';

/**
 * @koa/router route middleware with a circuit breaker on the route it is used on. A request fails when its
 * handler throws or answers >= 500 (`isFailure`), and is slow by its time to the response's
 * finish. While open, requests answer 503 with `Retry-After`, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * router.get('/feed', circuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000,
 *   fallback: (ctx) => { ctx.body = cachedFeed; } }), feed);
 */
export function circuitBreaker(options: CircuitBreakerOptions): Middleware {
  return routeMiddleware('circuitBreaker', options);
}
