import type { Server } from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import ratelimit from 'koa-ratelimit';
import { floodgateKoaGuard } from './floodgate-guards';
import { HELLO_BODY, HELLO_PATH, NEVER, USER_HEADER, type HttpVariant } from './http-variant';

/**
 * Koa 3 with @koa/router and one JSON route, bare or guarded. The peer is koa-ratelimit's
 * memory driver keyed per user. koa-ratelimit has no "block everything" setting: the blocked
 * variant allows 1 call per user per hour, spent during the warm-up.
 */
export async function startKoaServer(variant: HttpVariant): Promise<Server> {
  const app = new Koa();
  app.silent = true; // sockets the load generator closes at the end of a run are not news
  const router = new Router();
  const guards: Middleware[] = [];
  if (variant === 'floodgate' || variant === 'floodgate-blocked') guards.push(await floodgateKoaGuard(variant === 'floodgate-blocked'));
  if (variant === 'peer' || variant === 'peer-blocked') {
    guards.push(
      ratelimit({
        driver: 'memory',
        db: new Map(),
        duration: variant === 'peer' ? 60_000 : 3_600_000,
        max: variant === 'peer' ? NEVER : 1,
        id: (ctx) => ctx.get(USER_HEADER) || 'anonymous',
      }),
    );
  }
  router.get(HELLO_PATH, ...guards, (ctx) => {
    ctx.body = HELLO_BODY;
  });
  app.use(router.routes());
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}
