/**
 * A small API guarded by Floodgate on Koa with @koa/router:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen (test/examples/koa.test.ts drives it). Serve it:
 * `npx tsx --conditions=@floodgate/source examples/koa/app.ts` (on 127.0.0.1, port PORT or 3000).
 */
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { Floodgate } from '@floodgate/core';
import { blockResponse } from '@floodgate/core/http';
import { circuitBreaker, hotParam, resilience } from '@floodgate/koa';
import {
  FlakyRecommendations,
  GLOBAL_LIMIT,
  LastGoodRecommendations,
  PER_CALLER_LIMIT,
  RECOMMENDATIONS_BREAKER,
  type AppOptions,
} from '../shared/recommendations';
import { listenWith, serveExample } from '../shared/serve';

const caller = (ctx: Context): string => ctx.get('x-user-id') || 'anonymous';

/** Builds the app (without listening). */
export function createApp(options: AppOptions = {}): Koa {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new LastGoodRecommendations();
  const app = new Koa();
  const router = new Router();

  app.use(resilience({ floodgate: fg, routes: { '*': GLOBAL_LIMIT } }));

  router.get('/users/:id', hotParam({ floodgate: fg, param: caller, ...PER_CALLER_LIMIT }), (ctx) => {
    ctx.body = { id: ctx.params.id, name: `User ${ctx.params.id}` };
  });

  router.get(
    '/recommendations',
    circuitBreaker({
      floodgate: fg,
      ...RECOMMENDATIONS_BREAKER,
      fallback: (ctx, error) => {
        const items = lastGood.get(caller(ctx));
        if (items !== undefined) {
          ctx.body = { items, stale: true };
          return;
        }
        const { status, headers, json } = blockResponse(error);
        ctx.status = status;
        ctx.set(headers);
        ctx.body = json;
      },
    }),
    async (ctx) => {
      const items = await upstream.forUser(caller(ctx));
      lastGood.remember(caller(ctx), items);
      ctx.body = { items, stale: false };
    },
  );

  app.use(router.routes());
  return app;
}

if (require.main === module) void serveExample('koa', listenWith(createApp().callback()));
