import { isBlockError, type BlockError } from '@floodgate/core';
import { type GuardVerdict, type HttpGuard } from '@floodgate/core/http';
import type { Context, Next } from 'koa';
import type { KoaFallback } from './koa-options';

type Guard = HttpGuard<Context, KoaFallback>;

/** Answers a block with the fallback, else the problem response. What throws goes to Koa's error handling. */
export async function answerBlock(guard: Guard, error: BlockError, ctx: Context): Promise<void> {
  const fallback = guard.answer(ctx.res, ctx, error);
  if (fallback !== undefined) {
    await fallback(ctx, error);
    return;
  }
  const { status, headers, json } = guard.respond(error);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = json;
}

/**
 * Goes on to `next()` when the request passed, answers a block, or does nothing for a client
 * that left the queue. Downstream, a `BlockError` is answered when `answerDeeper` (the block
 * mapping) and rethrown otherwise; any other error is recorded for circuit breakers and rethrown.
 */
export async function proceed(guard: Guard, verdict: GuardVerdict | Promise<GuardVerdict>, ctx: Context, next: Next, answerDeeper: boolean): Promise<void> {
  if (verdict instanceof Promise) verdict = await verdict;
  if (verdict === 'aborted') return;
  if (verdict !== undefined) return answerBlock(guard, verdict, ctx);
  try {
    await next();
  } catch (err) {
    if (!isBlockError(err)) guard.traceError(ctx.res, err);
    else if (answerDeeper && !ctx.headerSent) return answerBlock(guard, err, ctx);
    throw err;
  }
}
