import type { BlockError } from '@floodgate/core';
import type { GuardVerdict, HttpGuard } from '@floodgate/core/http';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { FastifyFallback } from './fastify-options';

type Guard = HttpGuard<FastifyRequest, FastifyFallback>;

/**
 * Answers a block with the fallback, else the problem response. Returns the fallback's
 * promise, if any; what throws synchronously is the caller's.
 */
export function answerBlock(guard: Guard, error: BlockError, request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
  const fallback = guard.answer(reply.raw, request, error);
  if (fallback !== undefined) {
    const result = fallback(request, reply, error);
    return result instanceof Promise ? result : undefined;
  }
  const { status, headers, json } = guard.respond(error);
  reply.code(status).headers(headers).send(json);
  return undefined;
}

/**
 * Ends an `onRequest` hook: `done()` when the request passed, the answer to a block (the hook
 * chain then stops), nothing for a client that left the queue; errors go to `done(err)`.
 */
export function settle(guard: Guard, verdict: GuardVerdict | Promise<GuardVerdict>, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (verdict === undefined) return done();
  if (verdict instanceof Promise) {
    verdict.then((v) => settle(guard, v, request, reply, done), done);
    return;
  }
  if (verdict === 'aborted') {
    reply.hijack();
    return;
  }
  try {
    answerBlock(guard, verdict, request, reply)?.then(undefined, done);
  } catch (err) {
    done(err as Error);
  }
}
