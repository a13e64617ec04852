import type { IncomingHttpHeaders, Server } from 'node:http';
import type { Readable } from 'node:stream';
import type { BlockError, Floodgate } from '@floodgate/core';

/**
 * A framework-neutral description of a small app, which each framework's harness builds with
 * its own adapter, so one table of scenarios runs against Express, Koa and Fastify.
 */

/** What a neutral handler, param function or fallback sees of a request. */
export interface NeutralRequest {
  readonly headers: IncomingHttpHeaders;
  readonly params: Readonly<Record<string, string>>;
  /** The request's body as text, once received whole; rejects when the client leaves first. */
  body(): Promise<string>;
}

/** Reads a request's body (Node's `IncomingMessage`): its text, or a rejection when the client leaves before its end. */
export function readBody(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => resolve(text));
    stream.on('error', reject);
    stream.on('close', () => reject(new Error('the client left before the end of its request')));
  });
}

/** A neutral response: a status (200 by default) and a JSON body. */
export interface Reply {
  readonly status?: number;
  readonly body: unknown;
}

/** A route handler; it may throw, and may await the engine's ManualClock. */
export type Handler = (req: NeutralRequest) => Reply | Promise<Reply>;
/** A fallback: answers a block with a reply; it may throw. */
export type Fallback = (error: BlockError, req: NeutralRequest) => Reply | Promise<Reply>;

/** Rules declared on one route by the framework's per-route means (middleware or route config). */
export interface RouteGuardSpec {
  readonly rateLimit?: Record<string, unknown>;
  readonly circuitBreaker?: Record<string, unknown>;
  readonly hotParam?: Record<string, unknown>;
  readonly fallback?: Fallback;
  readonly timeoutMs?: number;
}

/** One route of the app, in the template syntax the three frameworks share (`/users/:id`). */
export interface RouteSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly guard?: RouteGuardSpec;
  readonly handler: Handler;
}

/**
 * The app: its engine, the options of `resilience()` / the Fastify plugin (functions in
 * neutral form: `origin(req)`, `onBlock(error, req)`, `fallback(error, req)`, routes'
 * `fallback` and hotspot `param(req)`; other values pass as they are), and its routes.
 */
export interface AppSpec {
  readonly floodgate: Floodgate;
  readonly options?: Record<string, unknown>;
  readonly routes: readonly RouteSpec[];
}

/** A started app: its server (not listening) and how to stop it. */
export interface Started {
  readonly server: Server;
  /** Errors that reached the framework's own error handling. */
  readonly errors: unknown[];
  close(): Promise<void>;
}

/** Builds a {@link AppSpec} with one framework; rejects when Floodgate refuses the options. */
export interface Harness {
  readonly name: string;
  start(spec: AppSpec): Promise<Started>;
}

/** How a harness turns neutral functions into its framework's. */
export interface Translation<Req, F> {
  request(req: Req, params?: Readonly<Record<string, string>>): NeutralRequest;
  fallback(fallback: Fallback): F;
}

/** The options of `resilience()` / the plugin, with their neutral functions translated. */
export function adaptOptions<Req, F>(
  options: Record<string, unknown> | undefined,
  t: Translation<Req, F>,
): Record<string, unknown> {
  if (options === undefined) return {};
  const out: Record<string, unknown> = { ...options };
  if (typeof options.origin === 'function') {
    const origin = options.origin as (req: NeutralRequest) => string;
    out.origin = (req: Req) => origin(t.request(req));
  }
  if (typeof options.onBlock === 'function') {
    const onBlock = options.onBlock as (error: BlockError, req: NeutralRequest) => void;
    out.onBlock = (error: BlockError, req: Req) => onBlock(error, t.request(req));
  }
  if (typeof options.fallback === 'function') out.fallback = t.fallback(options.fallback as Fallback);
  if (typeof options.routes === 'object' && options.routes !== null) {
    const routes: Record<string, unknown> = {};
    for (const [pattern, route] of Object.entries(options.routes))
      routes[pattern] = adaptRoute(route as RouteGuardSpec, t);
    out.routes = routes;
  }
  return out;
}

/** A route's rules, with their neutral fallback and param functions translated. */
export function adaptRoute<Req, F>(route: RouteGuardSpec, t: Translation<Req, F>): Record<string, unknown> {
  if (typeof route !== 'object' || route === null) return route;
  const out: Record<string, unknown> = { ...route };
  if (typeof route.fallback === 'function') out.fallback = t.fallback(route.fallback);
  if (route.hotParam !== undefined) out.hotParam = adaptHotParam(route.hotParam, t);
  return out;
}

/** A hotspot rule with its neutral `param` function translated. */
export function adaptHotParam<Req, F>(rule: Record<string, unknown>, t: Translation<Req, F>): Record<string, unknown> {
  if (typeof rule.param !== 'function') return rule;
  const param = rule.param as (req: NeutralRequest) => unknown;
  return { ...rule, param: (req: Req, params: Readonly<Record<string, string>>) => param(t.request(req, params)) };
}

/** Calls `send` with a fallback's reply, synchronously when the fallback is (so a throw stays a throw). */
export function sendReply(reply: Reply | Promise<Reply>, send: (reply: Reply) => unknown): unknown {
  return reply instanceof Promise ? reply.then(send) : send(reply);
}
