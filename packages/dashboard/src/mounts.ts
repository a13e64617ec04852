import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * The framework mounts only translate a framework's request into the dashboard's handler
 * (req, res, path, { originalUrl, body }). They need no framework at run time, and their types are
 * structural, so the package depends on none.
 */

/** What the mounts pass besides the request: where the dashboard is and a body already parsed. */
export interface HandleOptions {
  /** The request's full URL (before a framework stripped the mount path). @defaultValue `req.url` */
  readonly originalUrl?: string;
  /** A body a framework already parsed (express.json(), koa-bodyparser). */
  readonly body?: unknown;
}

/** The dashboard's framework-neutral handler (`Dashboard.handle`), which every mount calls. */
export type DashboardHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  options: HandleOptions,
) => Promise<void>;

/** An Express middleware (`(req, res, next)`), typed without Express. */
export type ExpressMiddleware = (
  req: IncomingMessage & { originalUrl?: string; body?: unknown },
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** What a Koa middleware receives, typed without Koa. */
export interface KoaContextLike {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  readonly originalUrl: string;
  readonly request: { readonly body?: unknown };
  respond?: boolean;
}

/** A Koa middleware, typed without Koa. */
export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/** The part of a Fastify instance the plugin uses, typed without Fastify. */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: unknown, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void>;
  }): unknown;
}

/** The part of a Fastify request the plugin uses. */
export interface FastifyRequestLike {
  readonly raw: IncomingMessage;
  readonly params: unknown;
}

/** The part of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  readonly raw: ServerResponse;
  hijack(): void;
}

/** A Fastify plugin (register it with `{ prefix }`), typed without Fastify. */
export type FastifyPluginLike = (instance: FastifyInstanceLike, options: unknown) => Promise<void>;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/** Express strips the mount path from `req.url` and keeps it in `req.originalUrl`. */
export function expressMount(handle: DashboardHandler): ExpressMiddleware {
  return function floodgateDashboard(req, res, next) {
    const originalUrl = req.originalUrl ?? req.url ?? '/';
    // Mounted at '/fg', Express gives '/' for both '/fg' and '/fg/': tell them apart.
    const url = req.url ?? '/';
    const path = url.split('?', 1)[0] === '/' && !originalUrl.split('?', 1)[0]!.endsWith('/') ? '' : url;
    handle(req, res, path, { originalUrl, body: req.body }).catch(next);
  };
}

/** Koa: answers paths under `prefix` itself (`ctx.respond = false`), passes the others on. */
export function koaMount(handle: DashboardHandler, prefix: string): KoaMiddleware {
  if (typeof prefix !== 'string' || !prefix.startsWith('/') || prefix.endsWith('/')) {
    throw new TypeError(
      `dashboard.koa(prefix): prefix must start with '/' and not end with one, e.g. '/floodgate', got ${JSON.stringify(prefix)}`,
    );
  }
  return async function floodgateDashboard(ctx, next) {
    if (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`)) return next() as Promise<void>;
    ctx.respond = false;
    const rest = ctx.originalUrl.slice(prefix.length);
    await handle(ctx.req, ctx.res, rest.startsWith('?') ? '' : rest, {
      originalUrl: ctx.originalUrl,
      body: ctx.request.body,
    });
  };
}

/**
 * Fastify: routes for the prefix and everything under it, in the plugin's own scope (not
 * wrapped in fastify-plugin, so the prefix applies), with the body left unread for the
 * dashboard to read within its limit.
 */
export function fastifyMount(handle: DashboardHandler): FastifyPluginLike {
  return function floodgateDashboard(instance) {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const handler = async (request: FastifyRequestLike, reply: FastifyReplyLike): Promise<void> => {
      reply.hijack();
      const url = request.raw.url ?? '/';
      const at = url.indexOf('?');
      const query = at < 0 ? '' : url.slice(at);
      const wildcard = (request.params as Record<string, string | undefined>)['*'];
      const path = wildcard !== undefined ? `/${wildcard}${query}` : url.split('?', 1)[0]!.endsWith('/') ? '/' : '';
      await handle(request.raw, reply.raw, path, { originalUrl: url });
    };
    instance.route({ method: METHODS, url: '/', handler });
    instance.route({ method: METHODS, url: '/*', handler });
    return Promise.resolve();
  };
}
