/**
 * A small API guarded by Floodgate on Fastify:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen (test/examples/fastify.test.ts drives it). Serve it:
 * `npx tsx --conditions=@floodgate/source examples/fastify/app.ts` (on 127.0.0.1, port PORT or 3000).
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { Floodgate } from '@floodgate/core';
import { blockResponse } from '@floodgate/core/http';
import fastifyFloodgate from '@floodgate/fastify';
import {
  FlakyRecommendations,
  GLOBAL_LIMIT,
  LastGoodRecommendations,
  PER_CALLER_LIMIT,
  RECOMMENDATIONS_BREAKER,
  type AppOptions,
} from '../shared/recommendations';
import { serveExample } from '../shared/serve';

const caller = (request: FastifyRequest): string => {
  const user = request.headers['x-user-id'];
  return typeof user === 'string' && user !== '' ? user : 'anonymous';
};

/** Builds the app (without listening). The routes are registered after the plugin, so it sees them. */
export function createApp(options: AppOptions = {}): FastifyInstance {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new LastGoodRecommendations();
  const app = Fastify();

  app.register(fastifyFloodgate, { floodgate: fg, routes: { '*': GLOBAL_LIMIT } });

  app.register(async (api) => {
    api.get<{ Params: { id: string } }>(
      '/users/:id',
      { config: { floodgate: { hotParam: { param: caller, ...PER_CALLER_LIMIT } } } },
      async (request) => ({ id: request.params.id, name: `User ${request.params.id}` }),
    );

    api.get(
      '/recommendations',
      {
        config: {
          floodgate: {
            circuitBreaker: RECOMMENDATIONS_BREAKER,
            fallback: (request, reply, error) => {
              const items = lastGood.get(caller(request));
              if (items !== undefined) return reply.send({ items, stale: true });
              const { status, headers, json } = blockResponse(error);
              return reply.code(status).headers(headers).send(json);
            },
          },
        },
      },
      async (request) => {
        const items = await upstream.forUser(caller(request));
        lastGood.remember(caller(request), items);
        return { items, stale: false };
      },
    );
  });

  return app;
}

if (require.main === module) {
  void serveExample('fastify', async (port, host) => {
    const app = createApp();
    await app.listen({ port, host });
    return app.server;
  });
}
