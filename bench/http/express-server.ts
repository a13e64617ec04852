import type { Server } from 'node:http';
import { Floodgate } from '@floodgate/core';
import type { Clock } from '@floodgate/core/testing';
import { resilience } from '@floodgate/express';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { assertThreeRules, floodgateRouteRules } from './floodgate-rules';
import {
  HELLO_BODY,
  HELLO_PATH,
  HELLO_RESOURCE,
  ignoreClose,
  NEVER,
  USER_HEADER,
  type HttpVariant,
} from './http-variant';

/**
 * Express 5 with one JSON route, bare or guarded by app-level middleware: Floodgate's
 * `resilience()` guarding every route with no rule, or with the route's three rules, or express-rate-limit with its defaults (memory
 * store, draft-6 and legacy headers) keyed per user, as an app limiting per user would
 * configure it.
 */
export async function startExpressServer(variant: HttpVariant, clock?: Clock): Promise<Server> {
  const app = express();
  if (variant === 'noop') app.use((_req, _res, next) => next());
  if (variant === 'listener') {
    app.use((_req, res, next) => {
      res.on('close', ignoreClose);
      next();
    });
  }
  if (variant === 'every-route') app.use(resilience({ floodgate: new Floodgate({ clock }), everyRoute: true }));
  if (variant === 'floodgate' || variant === 'floodgate-blocked') {
    const floodgate = new Floodgate({ clock });
    const rules = floodgateRouteRules<express.Request>(variant === 'floodgate-blocked', (req) => req.get(USER_HEADER));
    app.use(resilience({ floodgate, routes: { [HELLO_RESOURCE]: rules } }));
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
