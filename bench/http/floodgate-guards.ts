import type { Floodgate } from '@floodgate/core';
import { resilience as expressResilience } from '@floodgate/express';
import { fastifyFloodgate } from '@floodgate/fastify';
import { resilience as koaResilience } from '@floodgate/koa';
import type { RequestHandler } from 'express';
import type { FloodgateRouteConfig } from '@floodgate/fastify';
import type { FastifyInstance } from 'fastify';
import type { Middleware } from 'koa';
import { HELLO_RESOURCE, NEVER, USER_HEADER } from './http-variant';

/*
 * The Floodgate variants, through the adapters only: on `GET /hello`, a QPS rule high enough
 * never to block (threshold 0 in the blocked variant, so every request is refused with 429),
 * an errorRatio breaker that stays closed (the route never fails), and a per-user hotspot rule
 * on the `x-user-id` header. Each server has its own engine, checked with
 * {@link assertThreeRules} once the server listens.
 */

/** The three rules, without the per-framework `param` reader. */
function rules(blocked: boolean) {
  return {
    rateLimit: { threshold: blocked ? 0 : NEVER },
    circuitBreaker: { strategy: 'errorRatio' as const, threshold: 0.5, retryTimeoutMs: 5000 },
  };
}

/** Express: `app.use(resilience({ routes: { 'GET /hello': ... } }))`. */
export function floodgateExpressGuard(floodgate: Floodgate, blocked: boolean): RequestHandler {
  return expressResilience({
    floodgate,
    routes: { [HELLO_RESOURCE]: { ...rules(blocked), hotParam: { param: (req) => req.get(USER_HEADER), threshold: NEVER } } },
  });
}

/** Koa: `app.use(resilience({ routes: { 'GET /hello': ... } }))`, mounted before the router. */
export function floodgateKoaGuard(floodgate: Floodgate, blocked: boolean): Middleware {
  return koaResilience({
    floodgate,
    routes: { [HELLO_RESOURCE]: { ...rules(blocked), hotParam: { param: (ctx) => ctx.get(USER_HEADER), threshold: NEVER } } },
  });
}

/** Fastify: the plugin, then the route's `config.floodgate` (see {@link floodgateFastifyRouteConfig}). */
export async function registerFloodgateFastify(app: FastifyInstance, floodgate: Floodgate): Promise<void> {
  await app.register(fastifyFloodgate, { floodgate });
}

/** The hello route's `config.floodgate` for the Fastify plugin. */
export function floodgateFastifyRouteConfig(blocked: boolean): FloodgateRouteConfig {
  return { ...rules(blocked), hotParam: { param: (request) => request.headers[USER_HEADER], threshold: NEVER } };
}

/** Throws unless the engine holds exactly the three rules on the hello route (so the variant measures what it says). */
export function assertThreeRules(floodgate: Floodgate): void {
  const rules = floodgate.getRules();
  const count = (list: readonly { resource: string }[]): number => list.filter((rule) => rule.resource === HELLO_RESOURCE).length;
  const found = { flow: count(rules.flow), circuitBreakers: count(rules.circuitBreakers), hotParams: count(rules.hotParams) };
  if (found.flow !== 1 || found.circuitBreakers !== 1 || found.hotParams !== 1) {
    throw new Error(`expected one flow, one breaker and one hotspot rule on ${HELLO_RESOURCE}, found ${JSON.stringify(found)}`);
  }
}
