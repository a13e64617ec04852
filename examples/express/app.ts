/**
 * A small API guarded by Floodgate on Express:
 * - a global limit of 100 requests per second (`'*'`);
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: a slow-call circuit breaker over a flaky upstream; while it is
 *   open, callers get their last good recommendations (stale), or a 503 if there are none.
 * `createApp()` does not listen; see demo.ts (`npm run demo`) and test/examples/express.test.ts.
 */
import express, { type Express, type Request } from 'express';
import { blockResponse, Floodgate } from '@floodgate/core';
import { blockErrorHandler, circuitBreaker, hotParam, resilience } from '@floodgate/express';

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

const caller = (req: Request): string => req.get('x-user-id') ?? 'anonymous';

/** Builds the app (without listening). */
export function createApp(options: AppOptions = {}): Express {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const lastGood = new Map<string, readonly string[]>();
  const app = express();

  app.use(resilience({ floodgate: fg, routes: { '*': { rateLimit: { threshold: 100 } } } }));

  app.get(
    '/users/:id',
    hotParam({ floodgate: fg, param: caller, threshold: 5, specificItems: { vip: 20 } }),
    (req, res) => void res.json({ id: req.params.id, name: `User ${req.params.id}` }),
  );

  app.get(
    '/recommendations',
    circuitBreaker({
      floodgate: fg,
      strategy: 'slowRequestRatio',
      maxAllowedRtMs: 200,
      threshold: 0.5,
      minRequestAmount: 5,
      statIntervalMs: 10_000,
      retryTimeoutMs: 5_000,
      fallback: (req, res, error) => {
        const items = lastGood.get(caller(req));
        if (items !== undefined) return void res.json({ items, stale: true });
        const { status, headers, body } = blockResponse(error);
        res.status(status).set(headers).send(JSON.stringify(body));
      },
    }),
    async (req, res) => {
      const items = await upstream.forUser(caller(req));
      if (lastGood.size >= 10_000 && !lastGood.has(caller(req))) lastGood.delete(lastGood.keys().next().value!);
      lastGood.set(caller(req), items);
      res.json({ items, stale: false });
    },
  );

  app.use(blockErrorHandler({ floodgate: fg }));
  return app;
}
