/**
 * The servers compared on each framework. `noop` adds one middleware (Fastify: one route
 * `onRequest` hook) that does nothing: the framework's own price of any guard, Floodgate's or a
 * peer's. `listener` adds one that only listens to the response's `close`: the least a guard
 * that ends what it took when the request ends (whichever way it ends) does, before any check.
 * `every-route` puts every route under guard (`everyRoute: true`) with no rule anywhere: what a
 * route with no rule costs once any rule loaded later can reach it.
 */
export type HttpVariant =
  'bare' | 'noop' | 'listener' | 'every-route' | 'floodgate' | 'peer' | 'floodgate-blocked' | 'peer-blocked';

/** Frameworks benchmarked. */
export type Framework = 'express' | 'koa' | 'fastify';

/** In report order; the suite interleaves them in this order (reversed on odd rounds). */
export const HTTP_VARIANTS: readonly HttpVariant[] = [
  'bare',
  'noop',
  'listener',
  'every-route',
  'floodgate',
  'peer',
  'floodgate-blocked',
  'peer-blocked',
];

export const FRAMEWORKS: readonly Framework[] = ['express', 'koa', 'fastify'];

/** The route every server answers: a hello-world JSON body. */
export const HELLO_PATH = '/hello';
/** The Floodgate resource of that route (a route template, as the adapters name resources). */
export const HELLO_RESOURCE = 'GET /hello';
/** The JSON body. */
export const HELLO_BODY = Object.freeze({ hello: 'world' });
/** The header carrying the user id the per-user limits key on. */
export const USER_HEADER = 'x-user-id';
/**
 * Users the load generator cycles through (one request template each; autocannon prebuilds
 * every template for every connection, so thousands of them cost seconds of setup per run).
 */
export const USER_COUNT = 100;
/** A limit no run reaches. */
export const NEVER = 1e9;

/** What the `listener` variant listens with. */
export function ignoreClose(): void {
  // Nothing: the variant measures the listening.
}

/** Whether a variant should answer every measured request with a 429. */
export function isBlockedVariant(variant: HttpVariant): boolean {
  return variant.endsWith('-blocked');
}
