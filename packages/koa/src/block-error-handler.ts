import { HttpGuard } from '@floodgate/core/http';
import type { Context, Middleware, Next } from 'koa';
import { proceed } from './answer-block';
import type { BlockErrorHandlerOptions, KoaFallback } from './koa-options';

/**
 * The block mapping alone, for apps without {@link resilience}: middleware that answers a
 * `BlockError` thrown downstream (a decorated service method) as the Floodgate middleware
 * answer theirs, and rethrows every other error. Mount it first.
 *
 * @throws RuleValidationError when an option is invalid (naming it).
 * @example
 * app.use(blockErrorHandler());
 */
export function blockErrorHandler(options?: BlockErrorHandlerOptions): Middleware {
  const guard = HttpGuard.answering<Context, KoaFallback>(options, 'blockErrorHandler()');
  return function floodgateBlockErrorHandler(ctx: Context, next: Next): Promise<void> {
    return proceed(guard, undefined, ctx, next, true);
  };
}
