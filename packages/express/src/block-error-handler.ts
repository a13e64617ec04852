import { isBlockError } from '@floodgate/core';
import { HttpGuard } from '@floodgate/core/http';
import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import { answerBlock } from './answer-block';
import type { BlockErrorHandlerOptions, ExpressFallback } from './express-options';

/**
 * Error middleware that answers a `BlockError` thrown deeper (a decorated service method, an
 * `fg.entry()` in a handler) exactly as the middleware answer theirs; every other error goes
 * on to `next(err)`, after being recorded for circuit breakers. Mount it after the routes.
 *
 * @throws RuleValidationError when an option is invalid (naming it).
 * @example
 * app.use(blockErrorHandler());
 */
export function blockErrorHandler(options?: BlockErrorHandlerOptions): ErrorRequestHandler {
  const guard = HttpGuard.answering<Request, ExpressFallback>(options, 'blockErrorHandler()');
  return function floodgateBlockErrorHandler(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (!isBlockError(err)) {
      guard.traceError(res, err);
      return next(err);
    }
    if (res.headersSent) return next(err);
    answerBlock(guard, err, req, res, next);
  };
}
