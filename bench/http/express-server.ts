import type { Server } from 'node:http';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { Floodgate } from '@floodgate/core';
import { assertThreeRules, floodgateExpressGuard } from './floodgate-guards';
import { HELLO_BODY, HELLO_PATH, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Express 5 with one JSON route, bare or guarded by app-level middleware: Floodgate's
 * `resilience()`, or express-rate-limit with its defaults (memory store, draft-6 and legacy
 * headers) keyed per user, as an app limiting per user would configure it.
 */
export async function startExpressServer(variant: HttpVariant): Promise<Server> {
  const app = express();
  const floodgate = variant === 'floodgate' || variant === 'floodgate-blocked' ? new Floodgate() : undefined;
  if (floodgate) {
    app.use(floodgateExpressGuard(floodgate, variant === 'floodgate-blocked'));
    assertThreeRules(floodgate);
  }
  if (variant === 'peer' || variant === 'peer-blocked') {
    app.use(
      rateLimit({
        windowMs: 60_000,
        limit: variant === 'peer' ? NEVER : 0,
        keyGenerator: (req) => req.get(USER_HEADER) ?? 'anonymous',
        validate: { limit: false },
      }),
    );
  }
  app.get(HELLO_PATH, (_req, res) => {
    res.json(HELLO_BODY);
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}
