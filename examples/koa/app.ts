/**
 * A small API guarded by Floodgate on Koa with @koa/router:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen; see test/examples/koa.test.ts.
 */
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { blockResponse, Floodgate } from '@floodgate/core';
import { circuitBreaker, hotParam, resilience } from '@floodgate/koa';

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

const caller = (ctx: Context): string => ctx.get('x-user-id') || 'anonymous';

/** Builds the app (without listening). */
export function createApp(options: AppOptions = {}): Koa {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new Map<string, readonly string[]>();
  const app = new Koa();
  const router = new Router();

  app.use(resilience({ floodgate: fg, routes: { '*': { rateLimit: { threshold: 100 } } } }));

  router.get('/users/:id', hotParam({ floodgate: fg, param: caller, threshold: 5, specificItems: { vip: 20 } }), (ctx) => {
    ctx.body = { id: ctx.params.id, name: `User ${ctx.params.id}` };
  });

  router.get(
    '/recommendations',
    circuitBreaker({
      floodgate: fg,
      strategy: 'slowRequestRatio',
      maxAllowedRtMs: 200,
      threshold: 0.5,
      minRequestAmount: 5,
      statIntervalMs: 10_000,
      retryTimeoutMs: 5_000,
      fallback: (ctx, error) => {
        const items = lastGood.get(caller(ctx));
        if (items !== undefined) {
          ctx.body = { items, stale: true };
          return;
        }
        const { status, headers, body } = blockResponse(error);
        ctx.status = status;
        ctx.set(headers);
        ctx.body = JSON.stringify(body);
      },
    }),
    async (ctx) => {
      const items = await upstream.forUser(caller(ctx));
      if (lastGood.size >= 10_000 && !lastGood.has(caller(ctx))) lastGood.delete(lastGood.keys().next().value!);
      lastGood.set(caller(ctx), items);
      ctx.body = { items, stale: false };
    },
  );

  app.use(router.routes());
  return app;
}
