import { isBlockError } from '@floodgate/core';
import { HttpGuard, type GuardVerdict, type RouteParams } from '@floodgate/core/http';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { answerBlock, settle } from './answer-block';
import type { FastifyFallback, FloodgatePluginOptions } from './fastify-options';

type Guard = HttpGuard<FastifyRequest, FastifyFallback>;
type ErrorHandler = NonNullable<RouteOptions['errorHandler']>;

/** Registration options Fastify itself reads; not Floodgate's to refuse. */
const REGISTER_KEYS = ['prefix', 'logLevel', 'logSerializers'];

const plugin: FastifyPluginCallback<FloodgatePluginOptions> = (fastify, options, done) => {
  const own = Object.fromEntries(Object.entries(options).filter(([key]) => !REGISTER_KEYS.includes(key)));
  let guard: Guard;
  try {
    guard = HttpGuard.resilience<FastifyRequest, FastifyFallback>(own, 'Floodgate plugin');
  } catch (err) {
    return done(err as Error);
  }
  fastify.decorate('floodgate', guard.engine);
  if (guard.hasRoutes) {
    fastify.addHook('onRequest', function floodgateRoutes(request, reply, hookDone) {
      let verdict: GuardVerdict | Promise<GuardVerdict>;
      try {
        verdict = guard.guardRoutes(reply.raw, request, request.method, request.url);
      } catch (err) {
        return hookDone(err as Error);
      }
      settle(guard, verdict, request, reply, hookDone);
    });
  }
  fastify.addHook('onRoute', (route) => {
    route.errorHandler = answeringBlocks(guard, route.errorHandler);
    const config = route.config?.floodgate;
    if (config === undefined || config === false) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const policies = new Map(methods.map((method) => [method, guard.declareRoute(`${method} ${route.url}`, config, 'config.floodgate')]));
    const only = policies.size === 1 ? policies.values().next().value : undefined;
    const hook = function floodgateRoute(request: FastifyRequest, reply: FastifyReply, hookDone: HookHandlerDoneFunction): void {
      let verdict: GuardVerdict | Promise<GuardVerdict>;
      try {
        verdict = guard.guardRoute(reply.raw, request, only ?? policies.get(request.method)!, request.params as RouteParams);
      } catch (err) {
        return hookDone(err as Error);
      }
      settle(guard, verdict, request, reply, hookDone);
    };
    route.onRequest = [hook, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())];
  });
  done();
};

/**
 * The route's error handler, answering a `BlockError` from the handler (a decorated service
 * method) like a hook block; any other error is recorded for circuit breakers and goes to the
 * route's own error handler, else up to the instance's.
 */
function answeringBlocks(guard: Guard, routeHandler: ErrorHandler | undefined): ErrorHandler {
  return function floodgateErrorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (isBlockError(error) && !reply.sent) return answerBlock(guard, error, request, reply)?.then(() => undefined);
    if (!isBlockError(error)) guard.traceError(reply.raw, error);
    if (routeHandler !== undefined) return routeHandler.call(this, error, request, reply);
    throw error;
  };
}

/**
 * The Floodgate plugin for Fastify 5. Options: rules by route pattern (`routes`, matched on
 * every request in an `onRequest` hook; `'*'` is a global limit) and the common options
 * (`floodgate`, `origin`, `onBlock`, `fallback`, `headers`, `isFailure`). Routes opt in with
 * `config: { floodgate: { rateLimit, circuitBreaker, hotParam, fallback } }`, guarded as the
 * resource `METHOD url`. A `BlockError` thrown by a handler is answered like a hook block. The
 * instance is decorated with the engine (`fastify.floodgate`). Register it before the routes.
 *
 * @throws RuleValidationError (at `ready()`) when an option, pattern or route config is invalid, naming it.
 * @example
 * await app.register(fastifyFloodgate, { routes: { '*': { rateLimit: { threshold: 1000 } } } });
 * app.get('/users/:id', { config: { floodgate: { hotParam: { param: 'id', threshold: 5 } } } }, getUser);
 */
export const fastifyFloodgate = fp(plugin, { name: '@floodgate/fastify', fastify: '5.x' });
