/**
 * A small API guarded by Floodgate on Fastify:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen (call `ready()` and `listen()`); see test/examples/fastify.test.ts.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { blockResponse, Floodgate } from '@floodgate/core';
import fastifyFloodgate from '@floodgate/fastify';

/** Where recommendations come from. */
export interface RecommendationSource {
  forUser(userId: string): Promise<readonly string[]>;
}

/** An upstream that takes `latencyMs` per call (through the engine's clock, so tests can drive it). */
export class FlakyRecommendations implements RecommendationSource {
  /** How long a call takes; over 200 ms it counts as slow. */
  latencyMs = 20;

  constructor(private readonly fg: Floodgate) {}

  async forUser(userId: string): Promise<readonly string[]> {
    await this.fg.clock.sleep(this.latencyMs);
    return [`${userId}: new releases`, `${userId}: because you liked jazz`];
  }
}

/** Options of {@link createApp}. */
export interface AppOptions {
  /** The engine. @defaultValue a new Floodgate with the monotonic clock */
  readonly floodgate?: Floodgate;
  /** The recommendations upstream. @defaultValue a {@link FlakyRecommendations} on the engine */
  readonly recommendations?: RecommendationSource;
}

const caller = (request: FastifyRequest): string => {
  const user = request.headers['x-user-id'];
  return typeof user === 'string' && user !== '' ? user : 'anonymous';
};

/** Builds the app (without listening). The routes are registered after the plugin, so it sees them. */
export function createApp(options: AppOptions = {}): FastifyInstance {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new Map<string, readonly string[]>();
  const app = Fastify();

  app.register(fastifyFloodgate, { floodgate: fg, routes: { '*': { rateLimit: { threshold: 100 } } } });

  app.register(async (api) => {
    api.get<{ Params: { id: string } }>(
      '/users/:id',
      { config: { floodgate: { hotParam: { param: caller, threshold: 5, specificItems: { vip: 20 } } } } },
      async (request) => ({ id: request.params.id, name: `User ${request.params.id}` }),
    );

    api.get(
      '/recommendations',
      {
        config: {
          floodgate: {
            circuitBreaker: { strategy: 'slowRequestRatio', maxAllowedRtMs: 200, threshold: 0.5, minRequestAmount: 5, statIntervalMs: 10_000, retryTimeoutMs: 5_000 },
            fallback: (request, reply, error) => {
              const items = lastGood.get(caller(request));
              if (items !== undefined) return reply.send({ items, stale: true });
              const { status, headers, body } = blockResponse(error);
              return reply.code(status).headers(headers).send(JSON.stringify(body));
            },
          },
        },
      },
      async (request) => {
        const items = await upstream.forUser(caller(request));
        if (lastGood.size >= 10_000 && !lastGood.has(caller(request))) lastGood.delete(lastGood.keys().next().value!);
        lastGood.set(caller(request), items);
        return { items, stale: false };
      },
    );
  });

  return app;
}
