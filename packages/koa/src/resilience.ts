import { HttpGuard } from '@floodgate/core/http';
import type { Context, Middleware, Next } from 'koa';
import { proceed } from './answer-block';
import type { KoaFallback, ResilienceOptions } from './koa-options';

/**
 * Middleware that guards requests by route pattern, before routing: each pattern matching a
 * request (`'*'` matches every request: a global limit) is a resource named by the pattern,
 * checked in order. It is also the block mapping: a `BlockError` thrown downstream (a
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
  const guard = HttpGuard.resilience<Context, KoaFallback>(options, 'resilience()');
  return function floodgateResilience(ctx: Context, next: Next): Promise<void> {
    return proceed(guard, guard.hasRoutes ? guard.guardRoutes(ctx.res, ctx, ctx.method, ctx.originalUrl) : undefined, ctx, next, true);
  };
}
