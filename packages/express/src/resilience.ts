import { HttpGuard, type GuardVerdict } from '@floodgate/core/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { settle } from './answer-block';
import type { ExpressFallback, ResilienceOptions } from './express-options';

/**
 * App-level middleware that guards requests by route pattern before Express routes them. Each
 * pattern matching a request (`'*'` matches every request: a global limit) is a resource named
 * by the pattern, checked in order; flow and hotspot blocks answer 429, an open circuit 503,
 * as `blockResponse()` shapes them, unless a `fallback` answers. Patterns match the full path
 * (`req.originalUrl`), so mount it at the app's root.
 *
 * @throws RuleValidationError when an option, pattern or rule is invalid (naming it).
 * @example
 * app.use(resilience({
 *   routes: {
 *     '*': { rateLimit: { threshold: 1000 } },
 *     'GET /users/:id': { hotParam: { param: 'id', threshold: 5 } },
 *   },
 *   origin: (req) => req.get('x-app') ?? '',
 * }));
 */
export function resilience(options?: ResilienceOptions): RequestHandler {
  const guard = HttpGuard.resilience<Request, ExpressFallback>(options, 'resilience()');
  if (!guard.hasRoutes) return (_req: Request, _res: Response, next: NextFunction) => next();
  return function floodgateResilience(req: Request, res: Response, next: NextFunction): void {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      verdict = guard.guardRoutes(res, req, req.method, req.originalUrl);
    } catch (err) {
      return next(err);
    }
    settle(guard, verdict, req, res, next);
  };
}
