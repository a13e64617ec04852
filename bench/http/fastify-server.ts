import type { Server } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyContextConfig } from 'fastify';
import { Floodgate } from '@floodgate/core';
import { assertThreeRules, floodgateFastifyRouteConfig, registerFloodgateFastify } from './floodgate-guards';
import { HELLO_BODY, HELLO_PATH, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Fastify 5 with one JSON route, bare or guarded: Floodgate's plugin with the route's
 * `config.floodgate`, or @fastify/rate-limit (global, its local LRU store) keyed per user.
 */
export async function startFastifyServer(variant: HttpVariant): Promise<Server> {
  const app = Fastify({ logger: false });
  const floodgate = variant === 'floodgate' || variant === 'floodgate-blocked' ? new Floodgate() : undefined;
  if (floodgate) await registerFloodgateFastify(app, floodgate);
  if (variant === 'peer' || variant === 'peer-blocked') {
    await app.register(rateLimit, {
      max: variant === 'peer' ? NEVER : 0,
      timeWindow: 60_000,
      keyGenerator: (req) => String(req.headers[USER_HEADER] ?? 'anonymous'),
    });
  }
  const config: FastifyContextConfig = floodgate ? { floodgate: floodgateFastifyRouteConfig(variant === 'floodgate-blocked') } : {};
  app.get(HELLO_PATH, { config }, async () => HELLO_BODY);
  await app.listen({ port: 0, host: '127.0.0.1' });
  if (floodgate) assertThreeRules(floodgate);
  return app.server;
}
