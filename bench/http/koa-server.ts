import type { Server } from 'node:http';
import { Floodgate } from '@floodgate/core';
import type { Clock } from '@floodgate/core/testing';
import { resilience } from '@floodgate/koa';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import ratelimit from 'koa-ratelimit';
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
 * Koa 3 with @koa/router and one JSON route, bare or guarded by app-level middleware mounted
 * before the router: Floodgate's `resilience()` guarding every route with no rule, or with the
 * route's three rules, or
 * koa-ratelimit's memory driver keyed per user.
 */
export async function startKoaServer(variant: HttpVariant, clock?: Clock): Promise<Server> {
  const app = new Koa();
  app.silent = true; // sockets the load generator closes at the end of a run are not news
  if (variant === 'noop') app.use((_ctx, next) => next());
  if (variant === 'listener') {
    app.use((ctx, next) => {
      ctx.res.on('close', ignoreClose);
      return next();
    });
  }
  if (variant === 'every-route') app.use(resilience({ floodgate: new Floodgate({ clock }), everyRoute: true }));
  if (variant === 'floodgate' || variant === 'floodgate-blocked') {
    const floodgate = new Floodgate({ clock });
    const rules = floodgateRouteRules<Context>(variant === 'floodgate-blocked', (ctx) => ctx.get(USER_HEADER));
    app.use(resilience({ floodgate, routes: { [HELLO_RESOURCE]: rules } }));
    assertThreeRules(floodgate);
  }
  if (variant === 'peer' || variant === 'peer-blocked') {
    app.use(
      ratelimit({
        driver: 'memory',
        db: new Map(),
        duration: 60_000,
        max: variant === 'peer' ? NEVER : 0,
        id: (ctx) => ctx.get(USER_HEADER) || 'anonymous',
      }),
    );
  }
  const router = new Router();
  router.get(HELLO_PATH, (ctx) => {
    ctx.body = HELLO_BODY;
  });
  app.use(router.routes());
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}
