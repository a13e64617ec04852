import type { Server } from 'node:http';
import { Floodgate } from '@floodgate/core';
import type { Clock } from '@floodgate/core/testing';
import { fastifyFloodgate } from '@floodgate/fastify';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyContextConfig, type FastifyReply, type FastifyRequest } from 'fastify';
import { assertThreeRules, floodgateRouteRules } from './floodgate-rules';
import { HELLO_BODY, HELLO_PATH, ignoreClose, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Fastify 5 with one JSON route, bare or guarded: Floodgate's plugin guarding every route with
 * no rule, or with the three rules in the route's `config.floodgate`, or @fastify/rate-limit (global, its local LRU store) keyed
 * per user.
 */
export async function startFastifyServer(variant: HttpVariant, clock?: Clock): Promise<Server> {
  const app = Fastify({ logger: false });
  const floodgate = variant === 'floodgate' || variant === 'floodgate-blocked' ? new Floodgate({ clock }) : undefined;
  let config: FastifyContextConfig = {};
  if (floodgate) {
    await app.register(fastifyFloodgate, { floodgate });
    config = {
      floodgate: floodgateRouteRules<FastifyRequest>(
        variant === 'floodgate-blocked',
        (request) => request.headers[USER_HEADER],
      ),
    };
  }
  if (variant === 'every-route')
    await app.register(fastifyFloodgate, { floodgate: new Floodgate({ clock }), everyRoute: true });
  if (variant === 'peer' || variant === 'peer-blocked') {
    await app.register(rateLimit, {
      max: variant === 'peer' ? NEVER : 0,
      timeWindow: 60_000,
      keyGenerator: (req) => String(req.headers[USER_HEADER] ?? 'anonymous'),
    });
  }
  if (variant === 'noop')
    app.get(HELLO_PATH, { onRequest: (_request, _reply, done) => done() }, async () => HELLO_BODY);
  else if (variant === 'listener') {
    const onRequest = (_request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      reply.raw.on('close', ignoreClose);
      done();
    };
    app.get(HELLO_PATH, { onRequest }, async () => HELLO_BODY);
  } else app.get(HELLO_PATH, { config }, async () => HELLO_BODY);
  await app.listen({ port: 0, host: '127.0.0.1' });
  if (floodgate) assertThreeRules(floodgate);
  return app.server;
}
