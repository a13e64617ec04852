/**
 * A small API guarded by Floodgate on Express:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen (test/examples/express.test.ts drives it; demo.ts, `npm run demo`,
 * sends it a burst). Serve it: `npx tsx --conditions=@floodgate/source examples/express/app.ts`
 * (on 127.0.0.1, port PORT or 3000).
 */
import express, { type Express, type Request } from 'express';
import { Floodgate } from '@floodgate/core';
import { blockResponse } from '@floodgate/core/http';
import { blockErrorHandler, circuitBreaker, hotParam, resilience } from '@floodgate/express';
import {
  FlakyRecommendations,
  GLOBAL_LIMIT,
  LastGoodRecommendations,
  PER_CALLER_LIMIT,
  RECOMMENDATIONS_BREAKER,
  type AppOptions,
} from '../shared/recommendations';
import { listenWith, serveExample } from '../shared/serve';

export { FlakyRecommendations, type AppOptions, type RecommendationSource } from '../shared/recommendations';

const caller = (req: Request): string => req.get('x-user-id') ?? 'anonymous';

/** Builds the app (without listening). */
export function createApp(options: AppOptions = {}): Express {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new LastGoodRecommendations();
  const app = express();

  app.use(resilience({ floodgate: fg, routes: { '*': GLOBAL_LIMIT } }));

  app.get(
    '/users/:id',
    hotParam({ floodgate: fg, param: caller, ...PER_CALLER_LIMIT }),
    (req, res) => void res.json({ id: req.params.id, name: `User ${req.params.id}` }),
  );

  app.get(
    '/recommendations',
    circuitBreaker({
      floodgate: fg,
      ...RECOMMENDATIONS_BREAKER,
      fallback: (req, res, error) => {
        const items = lastGood.get(caller(req));
        if (items !== undefined) return void res.json({ items, stale: true });
        const { status, headers, json } = blockResponse(error);
        res.status(status).set(headers).send(json);
      },
    }),
    async (req, res) => {
      const items = await upstream.forUser(caller(req));
      lastGood.remember(caller(req), items);
      res.json({ items, stale: false });
    },
  );

  app.use(blockErrorHandler({ floodgate: fg }));
  return app;
}

if (require.main === module) void serveExample('express', listenWith(createApp()));
