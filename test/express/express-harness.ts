import { createServer } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  blockErrorHandler,
  circuitBreaker,
  hotParam,
  rateLimit,
  resilience,
  type ExpressFallback,
} from '@floodgate/express';
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

const translation: Translation<Request, ExpressFallback> = {
  request: (req, params) => ({
    headers: req.headers,
    params: params ?? (req.params as Record<string, string>),
    body: () => readBody(req),
  }),
  fallback: (fallback) => (req, res, error) =>
    sendReply(fallback(error, translation.request(req)), (reply) => res.status(reply.status ?? 200).json(reply.body)),
};

/** One per-route middleware per rule kind; the route's fallback and timeout go on the first (a route has one). */
function perRoute(spec: AppSpec, guard: RouteGuardSpec): RequestHandler[] {
  let fallback = guard.fallback === undefined ? undefined : translation.fallback(guard.fallback);
  let timeoutMs = guard.timeoutMs;
  const common = (): { floodgate: AppSpec['floodgate']; fallback?: ExpressFallback; timeoutMs?: number } => {
    const options = {
      floodgate: spec.floodgate,
      ...(fallback === undefined ? {} : { fallback }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    };
    fallback = undefined;
    timeoutMs = undefined;
    return options;
  };
  const handlers: RequestHandler[] = [];
  if (guard.rateLimit) handlers.push(rateLimit({ ...common(), ...(guard.rateLimit as { threshold: number }) }));
  if (guard.circuitBreaker)
    handlers.push(
      circuitBreaker({
        ...common(),
        ...(guard.circuitBreaker as { strategy: 'errorRatio'; threshold: number; retryTimeoutMs: number }),
      }),
    );
  if (guard.hotParam)
    handlers.push(
      hotParam({
        ...common(),
        ...(adaptHotParam(guard.hotParam, translation) as { param: string; threshold: number }),
      }),
    );
  return handlers;
}

/** Builds scenario apps with @floodgate/express: resilience() first, blockErrorHandler() last. */
export const expressHarness: Harness = {
  name: 'express',
  async start(spec: AppSpec): Promise<Started> {
    const errors: unknown[] = [];
    const app = express();
    app.use(resilience({ floodgate: spec.floodgate, ...adaptOptions(spec.options, translation) }));
    for (const route of spec.routes) {
      const guards = route.guard === undefined ? [] : perRoute(spec, route.guard);
      app[route.method === 'GET' ? 'get' : 'post'](route.path, ...guards, async (req: Request, res: Response) => {
        const reply = await route.handler(translation.request(req));
        // A route's timeout may have answered already.
        if (!res.headersSent) res.status(reply.status ?? 200).json(reply.body);
      });
    }
    app.use(blockErrorHandler({ floodgate: spec.floodgate }));
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(err);
      res.status(500).json({ error: 'internal' });
    });
    const server = createServer(app);
    return { server, errors, close: () => closeServer(server) };
  },
};

function closeServer(server: import('node:http').Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
    if (!server.listening) resolve();
  });
}
