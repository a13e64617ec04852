import type { BlockError } from '@floodgate/core';
import type { GuardVerdict, HttpGuard } from '@floodgate/core/http';
import type { NextFunction, Request, Response } from 'express';
import type { ExpressFallback } from './express-options';

type Guard = HttpGuard<Request, ExpressFallback>;

/** Goes on (`next()`), answers a block, or does nothing for a client that left the queue. */
export function settle(guard: Guard, verdict: GuardVerdict | Promise<GuardVerdict>, req: Request, res: Response, next: NextFunction): void {
  if (verdict === undefined) return next();
  if (verdict instanceof Promise) {
    verdict.then((v) => settle(guard, v, req, res, next), next);
    return;
  }
  if (verdict !== 'aborted') answerBlock(guard, verdict, req, res, next);
}

/** Answers a block with the fallback, else the problem response; what throws goes to `next(err)`. */
export function answerBlock(guard: Guard, error: BlockError, req: Request, res: Response, next: NextFunction): void {
  try {
    const fallback = guard.answer(res, req, error);
    if (fallback !== undefined) {
      const result = fallback(req, res, error);
      if (result instanceof Promise) result.then(undefined, next);
      return;
    }
    const { status, headers, json } = guard.respond(error);
    res.status(status).set(headers).send(json);
  } catch (err) {
    next(err);
  }
}
