import type { RequestHandler } from 'express';
import type { CircuitBreakerOptions } from './express-options';
import { routeMiddleware } from './route-middleware';

/**
 * Route middleware with a circuit breaker on the route it is used on. A request fails when its
 * handler throws or answers >= 500 (`isFailure`), and is slow by its time to the response's
 * finish. While open, requests answer 503 with `Retry-After`, unless `fallback` answers.
 *
 * @throws RuleValidationError when an option or rule field is invalid (naming it).
 * @example
 * app.get('/feed', circuitBreaker({ strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 5000,
 *   fallback: (req, res) => res.json(cachedFeed) }), feed);
 */
export function circuitBreaker(options: CircuitBreakerOptions): RequestHandler {
  return routeMiddleware('circuitBreaker', options);
}
