import type { Floodgate } from '../engine/floodgate';
import { Entry } from '../kernel/entry';
import { isBlockError, type BlockError } from '../kernel/errors';
import { RuleReader } from '../kernel/rule-reader';
import { blockResponse, type BlockResponse } from './block-response';
import { GuardedRequest, type HttpResponseLike } from './guarded-request';
import { readHttpOptions, type NormalizedHttpOptions } from './normalize-http-options';
import {
  normalizeResilienceOptions,
  normalizeRouteFactoryOptions,
  normalizeRouteOptions,
  type RouteRuleOption,
  type RouteRules,
} from './normalize-route-options';
import type { RateLimitHeadersDraft } from './rate-limit-headers';
import type { RouteParams, RoutePattern } from './route-pattern';
import type { RoutePolicy } from './route-policy';
import { RoutePolicyRegistry } from './route-policy-registry';

/**
 * What guarding a request decided: `undefined` (it passed: go on to the handler), a
 * `BlockError` (answer it with {@link HttpGuard.answer}), or `'aborted'` (the client left
 * while the request was queued: answer nothing).
 */
export type GuardVerdict = BlockError | 'aborted' | undefined;

const NO_ARGS: readonly unknown[] = Object.freeze([]);
const ANSWER_KEYS = ['floodgate', 'onBlock', 'fallback', 'headers'] as const;

interface Route {
  readonly pattern: RoutePattern;
  readonly policy: RoutePolicy;
}

/** The entry options reused by every synchronous admission of a guard (tryEntry keeps none of them). */
interface Scratch {
  readonly inbound: true;
  origin: string;
  args: readonly unknown[];
  params: RouteParams | undefined;
}

/**
 * The framework-neutral HTTP guard every adapter translates to: validates its options once,
 * declares its routes' rules on the engine, then per request enters each resource the request
 * falls under (by route pattern, or by the framework's matched route), queueing through
 * `enter()` with a client-disconnect signal where a rule may queue, and exits them when the
 * response closes, tracing failures for circuit breakers. Blocks are answered through
 * {@link HttpGuard.answer} and {@link HttpGuard.respond}. `Req` is the framework's request, `F`
 * its fallback function.
 *
 * @example
 * // An adapter's middleware, in outline (Express):
 * const guard = HttpGuard.resilience<Request, ExpressFallback>(options, 'resilience()');
 * function floodgateResilience(req, res, next) {
 *   const verdict = guard.guardRoutes(res, req, req.method, req.originalUrl); // may be a promise
 *   if (verdict === undefined) return next();
 *   if (verdict === 'aborted') return;
 *   const fallback = guard.answer(res, req, verdict);
 *   if (fallback !== undefined) return fallback(req, res, verdict);
 *   const { status, headers, json } = guard.respond(verdict);
 *   res.status(status).set(headers).send(json);
 * }
 */
export class HttpGuard<Req, F> {
  /** The engine guarding the requests. */
  readonly engine: Floodgate;
  private readonly origin: ((req: Req) => string) | undefined;
  private readonly onBlock: ((error: BlockError, req: Req) => void) | undefined;
  private readonly fallback: F | undefined;
  private readonly headers: RateLimitHeadersDraft | false;
  private readonly isFailure: (status: number, error: unknown) => boolean;
  private readonly registry: RoutePolicyRegistry;
  private readonly routes: readonly Route[];
  private readonly rules: RouteRules<Req, F> | undefined;
  private readonly fixed: RoutePolicy | undefined;
  private readonly byMethod = new Map<string, Map<string, RoutePolicy>>();
  private readonly scratch: Scratch = { inbound: true, origin: '', args: NO_ARGS, params: undefined };

  private constructor(
    options: NormalizedHttpOptions<Req, F>,
    private readonly name: string,
    routes: readonly { readonly pattern: RoutePattern; readonly rules: RouteRules<Req, F> }[],
    rules: RouteRules<Req, F> | undefined,
    resource: string | undefined,
  ) {
    this.engine = options.engine;
    this.origin = options.origin;
    this.onBlock = options.onBlock;
    this.fallback = options.fallback;
    this.headers = options.headers;
    this.isFailure = options.isFailure;
    this.registry = RoutePolicyRegistry.of(this.engine);
    this.routes = routes.map(({ pattern, rules: r }) => ({
      pattern,
      policy: this.registry.declare(pattern.resource, r as RouteRules<unknown, unknown>, `routes['${pattern.pattern}']`, this.context),
    }));
    this.rules = rules;
    this.fixed = resource === undefined || rules === undefined ? undefined : this.registry.declare(resource, rules as RouteRules<unknown, unknown>, '', this.context);
  }

  /**
   * A guard for `resilience()` or the Fastify plugin: common options and rules by route pattern.
   * @throws RuleValidationError naming every bad option, pattern and rule field.
   */
  static resilience<Req, F>(options: unknown, name: string): HttpGuard<Req, F> {
    const { http, routes } = normalizeResilienceOptions<Req, F>(options, name);
    return new HttpGuard(http, name, routes, undefined, undefined);
  }

  /**
   * A guard for a per-route factory (`rateLimit()`, `circuitBreaker()`, `hotParam()`): its rules
   * are declared on each route it is used on, the first time, unless `resource` names one.
   * @throws RuleValidationError naming every bad option and rule field.
   */
  static route<Req, F>(option: RouteRuleOption, options: unknown, name: string): HttpGuard<Req, F> {
    const { http, rules, resource } = normalizeRouteFactoryOptions<Req, F>(option, options, name);
    return new HttpGuard(http, name, [], rules, resource);
  }

  /**
   * A guard that only answers blocks thrown deeper (Express `blockErrorHandler()`): options
   * `floodgate`, `onBlock`, `fallback`, `headers`.
   * @throws RuleValidationError naming every bad option.
   */
  static answering<Req, F>(options: unknown, name: string): HttpGuard<Req, F> {
    const reader = new RuleReader();
    const obj = options === undefined ? {} : (reader.object(options, 'options') ?? {});
    reader.knownKeys(obj, ANSWER_KEYS, '');
    const http = readHttpOptions<Req, F>(obj, '', reader);
    reader.throwIfAny(`Invalid ${name} options`);
    return new HttpGuard(http, name, [], undefined, undefined);
  }

  private get context(): string {
    return `Invalid ${this.name} options`;
  }

  /** Whether the guard has route patterns to match (else `guardRoutes` never guards anything). */
  get hasRoutes(): boolean {
    return this.routes.length > 0;
  }

  /**
   * Declares a route's own rules (Fastify's `config.floodgate`) under `resource`.
   * @throws RuleValidationError naming every bad field under `path`.
   */
  declareRoute(resource: string, options: unknown, path: string): RoutePolicy {
    const rules = normalizeRouteOptions<Req, F>(options, path, resource, `Invalid Floodgate route config on ${resource}`);
    return this.registry.declare(resource, rules as RouteRules<unknown, unknown>, path, `Invalid Floodgate route config on ${resource}`);
  }

  /** Whether a per-route guard still has to declare its rules on the route `method template`. */
  isNewRoute(method: string, template: string): boolean {
    return this.fixed === undefined && this.byMethod.get(method)?.has(template) !== true;
  }

  /**
   * The policy of the route `method template` for a per-route factory, declaring the factory's
   * rules on it the first time (or its fixed `resource`).
   * @throws TypeError when the route is not known (`template` undefined) and no `resource` was given.
   */
  routePolicy(method: string, template: string | undefined): RoutePolicy {
    if (this.fixed !== undefined) return this.fixed;
    if (template === undefined) {
      throw new TypeError(`${this.name} cannot tell which route this request is on: use it in a route's handlers, or give it a resource`);
    }
    let byTemplate = this.byMethod.get(method);
    if (byTemplate === undefined) {
      byTemplate = new Map();
      this.byMethod.set(method, byTemplate);
    }
    let policy = byTemplate.get(template);
    if (policy === undefined) {
      policy = this.registry.declare(`${method} ${template}`, this.rules as RouteRules<unknown, unknown>, '', this.context);
      byTemplate.set(template, policy);
    }
    return policy;
  }

  /**
   * Guards a request by the route patterns: enters, in order, the resource of every pattern
   * that matches `method` and `url` (path and query) and that the request has not entered yet.
   * Synchronous unless a matched route queues. Throws what `origin` or a param function throws.
   */
  guardRoutes(res: HttpResponseLike, req: Req, method: string, url: string): GuardVerdict | Promise<GuardVerdict> {
    const routes = this.routes;
    let state: GuardedRequest | undefined;
    let origin = '';
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i]!;
      const params = route.pattern.match(method, url, route.policy.readsParams);
      if (params === undefined) continue;
      if (state === undefined) {
        origin = this.originOf(req);
        state = GuardedRequest.of(res, this.isFailure);
      }
      if (state.entered(route.policy.resource)) continue;
      if (route.policy.queues) return this.guardRoutesFrom(state, req, origin, method, url, i, params);
      const block = this.enterNow(state, req, origin, route.policy, params);
      if (block !== undefined) return block;
    }
    return undefined;
  }

  /**
   * Guards a request on one route (a per-route factory or Fastify route config), unless it
   * already entered the route's resource. Synchronous unless the route queues.
   */
  guardRoute(res: HttpResponseLike, req: Req, policy: RoutePolicy, params: RouteParams): GuardVerdict | Promise<GuardVerdict> {
    const state = GuardedRequest.of(res, this.isFailure);
    if (state.entered(policy.resource)) return undefined;
    const origin = this.originOf(req);
    return policy.queues ? this.enterQueued(state, req, origin, policy, params) : this.enterNow(state, req, origin, policy, params);
  }

  /**
   * Marks the request as answered by a block (it is then no failure for circuit breakers),
   * calls `onBlock`, and returns the fallback that answers it, if any: the route's, else the
   * guard's. Without one, answer with {@link HttpGuard.respond}. Throws what `onBlock` throws.
   */
  answer(res: HttpResponseLike, req: Req, error: BlockError): F | undefined {
    const state = GuardedRequest.find(res);
    if (state !== undefined) state.blocked = true;
    if (this.onBlock !== undefined) this.onBlock(error, req);
    const routeFallback = this.registry.find(error.resource)?.fallback as F | undefined;
    return routeFallback ?? this.fallback;
  }

  /** The response for a block ({@link blockResponse} with the guard's `headers` option). */
  respond(error: BlockError): BlockResponse {
    return blockResponse(error, { headers: this.headers });
  }

  /** Records the error a guarded request's handler threw, for circuit breakers. */
  traceError(res: HttpResponseLike, error: unknown): void {
    GuardedRequest.find(res)?.traceError(error);
  }

  private originOf(req: Req): string {
    if (this.origin === undefined) return '';
    const origin = this.origin(req);
    if (typeof origin !== 'string') throw new TypeError(`Floodgate's origin option must return a string, got ${typeof origin}`);
    return origin;
  }

  private async guardRoutesFrom(
    state: GuardedRequest,
    req: Req,
    origin: string,
    method: string,
    url: string,
    from: number,
    firstParams: RouteParams,
  ): Promise<GuardVerdict> {
    const routes = this.routes;
    let params: RouteParams | undefined = firstParams;
    for (let i = from; i < routes.length; i++) {
      const route = routes[i]!;
      if (i !== from) {
        params = route.pattern.match(method, url, route.policy.readsParams);
        if (params === undefined || state.entered(route.policy.resource)) continue;
      }
      const verdict = route.policy.queues ? await this.enterQueued(state, req, origin, route.policy, params!) : this.enterNow(state, req, origin, route.policy, params!);
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  }

  private enterNow(state: GuardedRequest, req: Req, origin: string, policy: RoutePolicy, params: RouteParams): BlockError | undefined {
    const options = this.scratch;
    options.origin = origin;
    options.params = params;
    options.args = policy.args(req, params);
    let result: Entry | BlockError;
    try {
      result = this.engine.tryEntry(policy.resource, options);
    } finally {
      options.args = NO_ARGS;
      options.params = undefined;
    }
    if (!(result instanceof Entry)) return result;
    state.entries.push(result);
    return undefined;
  }

  private async enterQueued(state: GuardedRequest, req: Req, origin: string, policy: RoutePolicy, params: RouteParams): Promise<GuardVerdict> {
    if (state.closed) return 'aborted';
    const args = policy.args(req, params);
    let entry: Entry;
    try {
      entry = await this.engine.enter(policy.resource, { inbound: true, origin, args, params, signal: state.signal });
    } catch (error) {
      if (isBlockError(error)) return error;
      if (state.closed) return 'aborted';
      throw error;
    }
    if (state.closed) {
      entry.exit();
      return 'aborted';
    }
    state.entries.push(entry);
    return undefined;
  }
}
