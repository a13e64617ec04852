import type { Server } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { registerFloodgateFastify } from './floodgate-guards';
import { HELLO_BODY, HELLO_PATH, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Fastify 5 with one JSON route, bare or guarded. The peer is @fastify/rate-limit (global,
 * local LRU store) keyed per user.
 */
export async function startFastifyServer(variant: HttpVariant): Promise<Server> {
  const app = Fastify({ logger: false });
  if (variant === 'floodgate' || variant === 'floodgate-blocked') await registerFloodgateFastify(app, variant === 'floodgate-blocked');
  if (variant === 'peer' || variant === 'peer-blocked') {
    await app.register(rateLimit, {
      max: variant === 'peer' ? NEVER : 0,
      timeWindow: 60_000,
      keyGenerator: (req) => String(req.headers[USER_HEADER] ?? 'anonymous'),
    });
  }
  app.get(HELLO_PATH, async () => HELLO_BODY);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server;
}
