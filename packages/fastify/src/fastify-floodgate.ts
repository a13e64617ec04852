import { isBlockError, type BlockError } from '@floodgate/core';
import {
  HttpGuard,
  ipAddressKey,
  templateParamNames,
  type GuardVerdict,
  type IpKeyOptions,
  type RouteParams,
  type RoutePolicy,
} from '@floodgate/core/http';
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyFallback, FloodgatePluginOptions, FloodgateRouteConfig } from './fastify-options';

type Guard = HttpGuard<FastifyRequest, FastifyFallback>;
type ErrorHandler = NonNullable<RouteOptions['errorHandler']>;

const NO_PARAMS: RouteParams = Object.freeze({});
/** Marks a GET route guarded only because every route is, for its exposed HEAD route. */
const EVERY_ROUTE: FloodgateRouteConfig = Object.freeze({});

/** Registration options Fastify itself reads; not Floodgate's to refuse. */
const REGISTER_KEYS = ['prefix', 'logLevel', 'logSerializers'];

/** The router settings patterns must follow, from the instance's configuration. */
interface RouterConfig {
  readonly caseSensitive?: boolean;
  readonly useSemicolonDelimiter?: boolean;
  readonly routerOptions?: { readonly caseSensitive?: boolean; readonly useSemicolonDelimiter?: boolean };
}

const plugin: FastifyPluginCallback<FloodgatePluginOptions> = (fastify, options, done) => {
  const own = Object.fromEntries(Object.entries(options).filter(([key]) => !REGISTER_KEYS.includes(key)));
  const config = fastify.initialConfig as RouterConfig;
  let guard: Guard;
  try {
    guard = HttpGuard.resilience<FastifyRequest, FastifyFallback>(own, 'Floodgate plugin', {
      caseSensitive: config.routerOptions?.caseSensitive ?? config.caseSensitive ?? true,
      semicolonDelimiter: config.routerOptions?.useSemicolonDelimiter ?? config.useSemicolonDelimiter ?? false,
    });
  } catch (err) {
    return done(err as Error);
  }
  fastify.decorate('floodgate', guard.engine);
  // Route patterns and API groups (loaded any time); with everyRoute, requests no route matches.
  const unmatched = guard.everyRoute ? { policy: guard.unmatchedPolicy, params: NO_PARAMS } : undefined;
  fastify.addHook('onRequest', function floodgateRoutes(request, reply, hookDone) {
    let verdict: GuardVerdict | Promise<GuardVerdict>;
    try {
      const route = unmatched !== undefined && request.is404 ? unmatched : undefined;
      verdict = guard.guardRoutes(reply.raw, request, request.method, request.url, undefined, route);
    } catch (err) {
      return hookDone(err as Error);
    }
    settle(guard, verdict, request, reply, hookDone);
  });
  // A GET route's config, so the HEAD route Fastify adds for it (exposeHeadRoutes) shares its resource.
  const getPolicies = new Map<string, { readonly config: FloodgateRouteConfig; readonly policy: RoutePolicy }>();
  fastify.addHook('onRoute', (route) => {
    route.errorHandler = answeringBlocks(guard, route.errorHandler);
    const config = route.config?.floodgate;
    if (config === false || (config === undefined && !guard.everyRoute)) {
      if (guard.hasTimeouts) route.handler = watchingHandler(guard, route.handler);
      return;
    }
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const paramNames = templateParamNames(route.url);
    const policies = new Map<string, RoutePolicy>();
    for (const method of methods) {
      if (method === 'HEAD' && methods.includes('GET')) continue;
      const shared = method === 'HEAD' ? getPolicies.get(route.url) : undefined;
      const policy =
        shared !== undefined && shared.config === (config ?? EVERY_ROUTE)
          ? shared.policy
          : config === undefined
            ? guard.everyRoutePolicy(method, route.url)
            : guard.declareRoute(`${method} ${route.url}`, config, 'config.floodgate', paramNames);
      policies.set(method, policy);
      if (method === 'GET') getPolicies.set(route.url, { config: config ?? EVERY_ROUTE, policy });
    }
    if (methods.includes('HEAD') && methods.includes('GET')) policies.set('HEAD', policies.get('GET')!);
    const only = policies.size === 1 ? policies.values().next().value : undefined;
    const hook = function floodgateRoute(
      request: FastifyRequest,
      reply: FastifyReply,
      hookDone: HookHandlerDoneFunction,
    ): void {
      let verdict: GuardVerdict | Promise<GuardVerdict>;
      try {
        verdict = guard.guardRoute(
          reply.raw,
          request,
          only ?? policies.get(request.method)!,
          request.params as RouteParams,
        );
      } catch (err) {
        return hookDone(err as Error);
      }
      settle(guard, verdict, request, reply, hookDone);
    };
    route.onRequest = [hook, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())];
    if (guard.hasTimeouts || [...policies.values()].some((policy) => policy.timeoutMs !== undefined))
      route.handler = watchingHandler(guard, route.handler);
  });
  done();
};

/**
 * The route's handler, telling core when it has settled (its promise, or its return for a
 * handler that returns none) for a request with a timeout: a request its timeout answered keeps
 * its slot until then. A request whose handler never runs (its body never came) gives it back
 * when it closes.
 */
function watchingHandler(guard: Guard, handler: RouteOptions['handler']): RouteOptions['handler'] {
  return function floodgateHandler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    const res = reply.raw;
    if (!guard.handlerStarts(res)) return handler.call(this, request, reply);
    const settled = (): void => guard.handlerSettled(res);
    let result: unknown;
    try {
      result = handler.call(this, request, reply);
    } catch (err) {
      settled();
      throw err;
    }
    if (result instanceof Promise) result.then(settled, settled);
    else settled();
    return result;
  };
}

/**
 * The route's error handler, answering a `BlockError` from the handler (a decorated service
 * method) like a hook block; any other error is recorded for circuit breakers and goes to the
 * route's own error handler, else up to the instance's.
 */
function answeringBlocks(guard: Guard, routeHandler: ErrorHandler | undefined): ErrorHandler {
  return function floodgateErrorHandler(
    this: FastifyInstance,
    error: FastifyError,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    if (isBlockError(error) && !reply.sent) return answerBlock(guard, error, request, reply)?.then(() => undefined);
    if (!isBlockError(error)) guard.traceError(reply.raw, error);
    if (routeHandler !== undefined) return routeHandler.call(this, error, request, reply);
    throw error;
  };
}

/**
 * Answers a block with the fallback, else the problem response. Returns the fallback's
 * promise, if any; what throws synchronously is the caller's.
 */
function answerBlock(
  guard: Guard,
  error: BlockError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> | undefined {
  const fallback = guard.answer(reply.raw, request, error);
  if (fallback !== undefined) {
    const result = fallback(request, reply, error);
    return result instanceof Promise ? result : undefined;
  }
  const { status, headers, json } = guard.respond(error);
  reply.code(status).headers(lowerCased(headers)).send(json);
  return undefined;
}

/** Block headers with their names in lower case, by the headers object blocks alike share (see `blockResponse`). */
const lowered = new WeakMap<object, Readonly<Record<string, string>>>();

/**
 * `headers` with their names in lower case, as Fastify keeps them, made once per headers object:
 * given a name with capitals, `reply.header()` lower-cases it into a new string on every call,
 * which V8 then looks up in its string table to use as a key; given the key of an object, in
 * lower case already, it has nothing to do (measured: about 0.5 µs of a 429's five headers).
 */
function lowerCased(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  let lower = lowered.get(headers);
  if (lower === undefined) {
    lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    lowered.set(headers, lower);
  }
  return lower;
}

/**
 * Ends an `onRequest` hook: `done()` when the request passed, the answer to a block (the hook
 * chain then stops), nothing for a client that left; errors go to `done(err)`.
 */
function settle(
  guard: Guard,
  verdict: GuardVerdict | Promise<GuardVerdict>,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  if (verdict === undefined) return done();
  if (verdict instanceof Promise) {
    verdict.then((v) => settle(guard, v, request, reply, done), done);
    return;
  }
  if (verdict === 'aborted') {
    reply.hijack();
    return;
  }
  try {
    answerBlock(guard, verdict, request, reply)?.then(undefined, done);
  } catch (err) {
    done(err as Error);
  }
}

/**
 * The client's address as a rate-limit key: `request.ip` (which follows the instance's
 * `trustProxy` option), IPv4-mapped IPv6 read as IPv4, IPv6 grouped by its /56
 * (`ipv6Subnet`). Use it as `origin` or as a hotspot `param`.
 * @throws RangeError when `ipv6Subnet` is not an integer within [1, 128] or `false`.
 * @example
 * const app = Fastify({ trustProxy: 1 }); // one proxy in front: request.ip is the address it saw
 * await app.register(fastifyFloodgate, { routes: { 'POST /login': { hotParam: { param: ipKey, threshold: 5 } } } });
 */
export function ipKey(request: FastifyRequest, options?: IpKeyOptions): string {
  return ipAddressKey(request.ip, options);
}

/**
 * The Floodgate plugin for Fastify 5. Options: rules by route pattern (`routes`, matched on
 * every request in an `onRequest` hook as the instance routes it: its `caseSensitive` and
 * `useSemicolonDelimiter`, `HEAD` as `GET`; `'*'` is a global limit) and the common options
 * (`floodgate`, `origin`, `onBlock`, `fallback`, `headers`, `isFailure`). Routes opt in with
 * `config: { floodgate: { rateLimit, circuitBreaker, hotParam, fallback, timeoutMs } }`,
 * guarded as the resource `METHOD url` (the `HEAD` route Fastify adds for a `GET` route shares
 * its resource). A `BlockError` thrown by a handler is answered like a hook block. The
 * instance is decorated with the engine (`fastify.floodgate`). Register it before the routes.
 *
 * @throws RuleValidationError (at `ready()`) when an option, pattern or route config is invalid
 *   (a hotspot `param` naming no parameter of the route too), naming it.
 * @example
 * await app.register(fastifyFloodgate, { routes: { '*': { rateLimit: { threshold: 1000 } } } });
 * app.get('/users/:id', { config: { floodgate: { hotParam: { param: 'id', threshold: 5 } } } }, getUser);
 */
export const fastifyFloodgate = fp(plugin, { name: '@floodgate/fastify', fastify: '5.x' });
