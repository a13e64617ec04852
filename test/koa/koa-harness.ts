import { createServer, type Server } from 'node:http';
import Koa, { type Context, type Middleware } from 'koa';
import Router from '@koa/router';
import { circuitBreaker, hotParam, rateLimit, resilience, type KoaFallback } from '@floodgate/koa';
import {
  adaptHotParam,
  adaptOptions,
  readBody,
  sendReply,
  type AppSpec,
  type Harness,
  type RouteGuardSpec,
  type Started,
  type Translation,
} from '../http/app-spec';

const translation: Translation<Context, KoaFallback> = {
  request: (ctx, params) => ({
    headers: ctx.headers,
    params: params ?? (ctx as unknown as { params?: Record<string, string> }).params ?? {},
    body: () => readBody(ctx.req),
  }),
  fallback: (fallback) => (ctx, error) =>
    sendReply(fallback(error, translation.request(ctx)), (reply) => {
      ctx.status = reply.status ?? 200;
      ctx.body = reply.body;
    }),
};

/** One per-route middleware per rule kind; the route's fallback and timeout go on the first (a route has one). */
function perRoute(spec: AppSpec, guard: RouteGuardSpec): Middleware[] {
  let fallback = guard.fallback === undefined ? undefined : translation.fallback(guard.fallback);
  let timeoutMs = guard.timeoutMs;
  const common = (): { floodgate: AppSpec['floodgate']; fallback?: KoaFallback; timeoutMs?: number } => {
    const options = {
      floodgate: spec.floodgate,
      ...(fallback === undefined ? {} : { fallback }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    };
    fallback = undefined;
    timeoutMs = undefined;
    return options;
  };
  const middleware: Middleware[] = [];
  if (guard.rateLimit) middleware.push(rateLimit({ ...common(), ...(guard.rateLimit as { threshold: number }) }));
  if (guard.circuitBreaker)
    middleware.push(
      circuitBreaker({
        ...common(),
        ...(guard.circuitBreaker as { strategy: 'errorRatio'; threshold: number; retryTimeoutMs: number }),
      }),
    );
  if (guard.hotParam)
    middleware.push(
      hotParam({
        ...common(),
        ...(adaptHotParam(guard.hotParam, translation) as { param: string; threshold: number }),
      }),
    );
  return middleware;
}

/** Builds scenario apps with @floodgate/koa: resilience() first (also the block mapping), then @koa/router. */
export const koaHarness: Harness = {
  name: 'koa',
  async start(spec: AppSpec): Promise<Started> {
    const errors: unknown[] = [];
    const app = new Koa();
    app.on('error', (err: unknown) => errors.push(err));
    app.use(resilience({ floodgate: spec.floodgate, ...adaptOptions(spec.options, translation) }));
    const router = new Router();
    for (const route of spec.routes) {
      const guards = route.guard === undefined ? [] : perRoute(spec, route.guard);
      router[route.method === 'GET' ? 'get' : 'post'](route.path, ...guards, async (ctx: Context) => {
        const reply = await route.handler(translation.request(ctx));
        ctx.status = reply.status ?? 200;
        ctx.body = reply.body;
      });
    }
    app.use(router.routes());
    const server = createServer(app.callback());
    return { server, errors, close: () => closeServer(server) };
  },
};

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
    if (!server.listening) resolve();
  });
}
