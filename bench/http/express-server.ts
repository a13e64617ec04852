import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { floodgateExpressGuard } from './floodgate-guards';
import { HELLO_BODY, HELLO_PATH, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Express 5 with one JSON route, bare or guarded. The peer is express-rate-limit with its
 * defaults (memory store, draft-6 and legacy headers) keyed per user, as an app limiting per
 * user would configure it.
 */
export async function startExpressServer(variant: HttpVariant): Promise<Server> {
  const app = express();
  const guards: RequestHandler[] = [];
  if (variant === 'floodgate' || variant === 'floodgate-blocked') guards.push(await floodgateExpressGuard(variant === 'floodgate-blocked'));
  if (variant === 'peer' || variant === 'peer-blocked') {
    guards.push(
      rateLimit({
        windowMs: 60_000,
        limit: variant === 'peer' ? NEVER : 0,
        keyGenerator: (req) => req.get(USER_HEADER) ?? 'anonymous',
        validate: { limit: false },
      }),
    );
  }
  app.get(HELLO_PATH, ...guards, (_req, res) => {
    res.json(HELLO_BODY);
  });
  return listen((resolve) => app.listen(0, '127.0.0.1', resolve));
}

function listen(start: (resolve: () => void) => Server): Promise<Server> {
  return new Promise((resolve) => {
    const server = start(() => resolve(server));
  });
}
