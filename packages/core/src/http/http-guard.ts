import type { Floodgate } from '../engine/floodgate';
import { Entry } from '../kernel/entry';
import { isBlockError, type BlockError, type TimeoutError } from '../kernel/errors';
import { RuleReader } from '../kernel/rule-reader';
import { blockResponse, requestTimeoutResponse, timeoutResponse, type BlockResponse } from './block-response';
import { GuardedRequest, type HttpResponseLike } from './guarded-request';
import {
  normalizeResilienceOptions,
  normalizeRouteFactoryOptions,
  normalizeRouteOptions,
  readHttpOptions,
  type NormalizedHeaders,
  type NormalizedHttpOptions,
  type RouteRuleOption,
  type RouteRules,
} from './normalize-options';
import { quotaHeaders } from './rate-limit-headers';
import { foldCase, requestPath, type PathMatching, type RouteParams, type RoutePattern } from './route-pattern';
import { RoutePolicyRegistry, templateParamNames, type RoutePolicy } from './route-policy';

/**
 * What guarding a request decided: `undefined` (it passed: go on to the handler), a
 * `BlockError` (answer it with {@link HttpGuard.answer}), or `'aborted'` (the client left
 * before the request was admitted: answer nothing).
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
 * `enter()` with a client-disconnect signal where a rule may queue. The request's outcome is
 * recorded when its handler answered (`res.end()`), tracing failures for circuit breakers,
 * and its entries exit when it ends (its response or its connection closes, once; see
 * `GuardedRequest`); a refusal gives back what the request took on its way; a route's
 * `timeoutMs` answers 503 (408 to a client still sending the request) when it passes, and the
 * request then keeps its slots until its handler settles ({@link HttpGuard.handlerStarts}).
 * Blocks are answered through {@link HttpGuard.answer} and {@link HttpGuard.respond}.
 * `Req` is the framework's request, `F` its fallback function.
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
 *   res.writeHead(status, headers).end(json);
 * }
 */
export class HttpGuard<Req, F> {
  /** The engine guarding the requests. */
  readonly engine: Floodgate;
  private readonly origin: ((req: Req) => string) | undefined;
  private readonly onBlock: ((error: BlockError, req: Req) => void) | undefined;
  private readonly fallback: F | undefined;
  private readonly headers: NormalizedHeaders;
  private readonly isFailure: (status: number, error: unknown) => boolean;
  private readonly registry: RoutePolicyRegistry;
  private readonly routes: readonly Route[];
  private readonly headRoutes: readonly Route[];
  private readonly caseSensitive: boolean;
  private readonly semicolon: boolean;
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
    matching: PathMatching | undefined,
  ) {
    this.engine = options.engine;
    this.origin = options.origin;
    this.onBlock = options.onBlock;
    this.fallback = options.fallback;
    this.headers = options.headers;
    this.isFailure = options.isFailure;
    this.caseSensitive = matching?.caseSensitive === true;
    this.semicolon = matching?.semicolonDelimiter === true;
    this.registry = RoutePolicyRegistry.of(this.engine);
    if (this.headers.onPass) this.registry.watchQuotas();
    this.routes = routes.map(({ pattern, rules: r }) => ({
      pattern,
      policy: this.registry.declare(
        pattern.resource,
        r as RouteRules<unknown, unknown>,
        `routes['${pattern.pattern}']`,
        this.context,
      ),
    }));
    this.headRoutes = this.routes.filter((route) => route.pattern.method === 'HEAD');
    this.rules = rules;
    this.fixed =
      resource === undefined || rules === undefined
        ? undefined
        : this.registry.declare(resource, rules as RouteRules<unknown, unknown>, '', this.context);
  }

  /**
   * A guard for `resilience()` or the Fastify plugin: common options and rules by route pattern.
   * `matching` says how the framework's router reads paths (letter case, `;`).
   * @throws RuleValidationError naming every bad option, pattern and rule field.
   */
  static resilience<Req, F>(options: unknown, name: string, matching?: PathMatching): HttpGuard<Req, F> {
    const { http, routes } = normalizeResilienceOptions<Req, F>(options, name);
    return new HttpGuard(http, name, routes, undefined, undefined, matching);
  }

  /**
   * A guard for a per-route factory (`rateLimit()`, `circuitBreaker()`, `hotParam()`): its rules
   * are declared on each route it is used on, the first time, unless `resource` names one.
   * @throws RuleValidationError naming every bad option and rule field.
   */
  static route<Req, F>(option: RouteRuleOption, options: unknown, name: string): HttpGuard<Req, F> {
    const { http, rules, resource } = normalizeRouteFactoryOptions<Req, F>(option, options, name);
    return new HttpGuard(http, name, [], rules, resource, undefined);
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
    return new HttpGuard(http, name, [], undefined, undefined, undefined);
  }

  private get context(): string {
    return `Invalid ${this.name} options`;
  }

  /** Whether the guard has route patterns to match (else `guardRoutes` never guards anything). */
  get hasRoutes(): boolean {
    return this.routes.length > 0;
  }

  /** Whether a route pattern of the guard has a `timeoutMs` (adapters then watch every handler). */
  get hasTimeouts(): boolean {
    return this.routes.some((route) => route.policy.timeoutMs !== undefined);
  }

  /**
   * Declares a route's own rules (Fastify's `config.floodgate`) under `resource`; `paramNames`,
   * when given, are the route's path parameters, which a hotspot `param` must name.
   * @throws RuleValidationError naming every bad field under `path`.
   */
  declareRoute(resource: string, options: unknown, path: string, paramNames?: readonly string[]): RoutePolicy {
    const context = `Invalid Floodgate route config on ${resource}`;
    const rules = normalizeRouteOptions<Req, F>(options, path, resource, context, paramNames);
    return this.registry.declare(resource, rules as RouteRules<unknown, unknown>, path, context);
  }

  /** Whether a per-route guard still has to declare its rules on the route `method template`. */
  isNewRoute(method: string, template: string): boolean {
    return this.fixed === undefined && this.byMethod.get(method)?.has(template) !== true;
  }

  /**
   * The policy of the route `method template` for a per-route factory, declaring the factory's
   * rules on it the first time (or its fixed `resource`). A hotspot `param` must name one of
   * the route's parameters, `paramNames` (by default the template's), or of the request's
   * `params` (a router's mount parameters, where the framework merges them in).
   * @throws TypeError when the route is not known (`template` undefined) and no `resource` was given.
   * @throws RuleValidationError when a `param` names no parameter of the route (on every request to it).
   */
  routePolicy(
    method: string,
    template: string | undefined,
    params?: RouteParams,
    paramNames?: readonly string[],
  ): RoutePolicy {
    if (this.fixed !== undefined) return this.fixed;
    if (template === undefined) {
      throw new TypeError(
        `${this.name} cannot tell which route this request is on: use it in a route's handlers, or give it a resource`,
      );
    }
    let byTemplate = this.byMethod.get(method);
    if (byTemplate === undefined) {
      byTemplate = new Map();
      this.byMethod.set(method, byTemplate);
    }
    let policy = byTemplate.get(template);
    if (policy === undefined) {
      const resource = `${method} ${template}`;
      const names = [...new Set([...(paramNames ?? templateParamNames(template)), ...Object.keys(params ?? {})])];
      policy = this.registry.declare(
        resource,
        this.rules as RouteRules<unknown, unknown>,
        '',
        `Invalid ${this.name} options on ${resource}`,
        names,
      );
      byTemplate.set(template, policy);
    }
    return policy;
  }

  /**
   * Guards a request by the route patterns: enters, in order, the resource of every pattern
   * that matches `method` and `url` (the request target) and that the request has not entered
   * yet. A `HEAD` request is matched as `GET` unless a `HEAD` pattern matches it.
   * `caseSensitive` overrides the guard's path matching for this request (Express reads its
   * app setting per request). Synchronous unless a matched route queues. Throws what `origin`
   * or a param function throws.
   */
  guardRoutes(
    res: HttpResponseLike,
    req: Req,
    method: string,
    url: string,
    caseSensitive = this.caseSensitive,
  ): GuardVerdict | Promise<GuardVerdict> {
    const routes = this.routes;
    const path = requestPath(url, this.semicolon);
    const folded = caseSensitive ? undefined : foldCase(path);
    if (method === 'HEAD' && !this.headMatches(path, folded)) method = 'GET';
    let state: GuardedRequest | undefined;
    let origin = '';
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i]!;
      const params = route.pattern.matchPath(method, path, folded, route.policy.readsParams);
      if (params === undefined) continue;
      if (state === undefined) {
        origin = this.originOf(req);
        state = GuardedRequest.of(res, this.isFailure);
        if (state.closed) return 'aborted';
      }
      if (state.entered(route.policy.resource)) continue;
      if (route.policy.queues)
        return this.guardRoutesFrom(state, res, req, origin, { method, path, folded }, i, params);
      const block = this.enterNow(state, res, req, origin, route.policy, params);
      if (block !== undefined) return block;
    }
    if (state !== undefined && this.headers.onPass) this.describeQuota(res, state);
    return undefined;
  }

  /**
   * Guards a request on one route (a per-route factory or Fastify route config), unless it
   * already entered the route's resource. Synchronous unless the route queues.
   */
  guardRoute(
    res: HttpResponseLike,
    req: Req,
    policy: RoutePolicy,
    params: RouteParams,
  ): GuardVerdict | Promise<GuardVerdict> {
    const state = GuardedRequest.of(res, this.isFailure);
    if (state.closed) return 'aborted';
    if (state.entered(policy.resource)) return undefined;
    const origin = this.originOf(req);
    if (policy.queues)
      return this.enterQueued(state, res, req, origin, policy, params).then((verdict) =>
        this.passed(res, state, verdict),
      );
    return this.passed(res, state, this.enterNow(state, res, req, origin, policy, params));
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
    return blockResponse(error, { headers: this.headers.draft });
  }

  /**
   * Records the error a guarded request's handler threw, for circuit breakers; it also tells
   * that the handler has settled (see {@link HttpGuard.handlerStarts}).
   */
  traceError(res: HttpResponseLike, error: unknown): void {
    GuardedRequest.findHolding(res)?.traceError(error);
  }

  /**
   * The adapter hands a guarded request on to its handler (or to the rest of its middleware
   * chain). When the request has a timeout, returns `true`: the adapter then reports, with
   * {@link HttpGuard.handlerSettled}, when what it handed on has settled (Koa: `await next()`;
   * Fastify: the handler's promise), because a request its timeout answered keeps its
   * concurrency slot until then. Where the adapter cannot tell (Express), the handler's own
   * late `res.end()` (discarded) and an error handed to `next(err)` that reaches Floodgate's
   * error handling ({@link HttpGuard.traceError}) tell instead.
   */
  handlerStarts(res: HttpResponseLike): boolean {
    return GuardedRequest.find(res)?.handlerStarts() === true;
  }

  /** What the adapter handed on after {@link HttpGuard.handlerStarts} returned `true` has settled. */
  handlerSettled(res: HttpResponseLike): void {
    GuardedRequest.findHolding(res)?.handlerSettled();
  }

  private originOf(req: Req): string {
    if (this.origin === undefined) return '';
    const origin = this.origin(req);
    if (typeof origin !== 'string')
      throw new TypeError(`Floodgate's origin option must return a string, got ${typeof origin}`);
    return origin;
  }

  /** Whether a `HEAD` pattern matches the path (then `HEAD` requests are not matched as `GET`). */
  private headMatches(path: string, folded: string | undefined): boolean {
    const routes = this.headRoutes;
    for (let i = 0; i < routes.length; i++)
      if (routes[i]!.pattern.matchPath('HEAD', path, folded, false) !== undefined) return true;
    return false;
  }

  private passed(res: HttpResponseLike, state: GuardedRequest, verdict: GuardVerdict): GuardVerdict {
    if (verdict === undefined && this.headers.onPass) this.describeQuota(res, state);
    return verdict;
  }

  private async guardRoutesFrom(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    target: { readonly method: string; readonly path: string; readonly folded: string | undefined },
    from: number,
    firstParams: RouteParams,
  ): Promise<GuardVerdict> {
    const routes = this.routes;
    let params: RouteParams | undefined = firstParams;
    for (let i = from; i < routes.length; i++) {
      const route = routes[i]!;
      if (i !== from) {
        params = route.pattern.matchPath(target.method, target.path, target.folded, route.policy.readsParams);
        if (params === undefined || state.entered(route.policy.resource)) continue;
      }
      const verdict = route.policy.queues
        ? await this.enterQueued(state, res, req, origin, route.policy, params!)
        : this.enterNow(state, res, req, origin, route.policy, params!);
      if (verdict !== undefined) return verdict;
    }
    return this.passed(res, state, undefined);
  }

  private enterNow(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    policy: RoutePolicy,
    params: RouteParams,
  ): BlockError | 'aborted' | undefined {
    if (state.closed) return 'aborted';
    const options = this.scratch;
    options.origin = origin;
    options.params = params;
    let result: Entry | BlockError;
    try {
      options.args = policy.args(req, params);
      result = this.engine.tryEntry(policy.resource, options);
    } catch (error) {
      // A throwing param function or check: what the request took on its way goes back too.
      state.refuse();
      throw error;
    } finally {
      options.args = NO_ARGS;
      options.params = undefined;
    }
    if (!(result instanceof Entry)) {
      state.refuse();
      return result;
    }
    this.hold(state, res, policy, result);
    return undefined;
  }

  private async enterQueued(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    policy: RoutePolicy,
    params: RouteParams,
  ): Promise<GuardVerdict> {
    if (state.closed) return 'aborted';
    // A place in the queue is held: the client leaving must abort it.
    state.listen();
    let entry: Entry;
    state.queued = true;
    try {
      const args = policy.args(req, params);
      entry = await this.engine.enter(policy.resource, { inbound: true, origin, args, params, signal: state.signal });
    } catch (error) {
      if (state.closed) return 'aborted';
      state.refuse();
      if (isBlockError(error)) return error;
      throw error;
    } finally {
      state.queued = false;
    }
    if (state.closed) {
      entry.cancel();
      return 'aborted';
    }
    this.hold(state, res, policy, entry);
    return undefined;
  }

  /** Keeps an admitted entry for the request, and starts the route's timeout. */
  private hold(state: GuardedRequest, res: HttpResponseLike, policy: RoutePolicy, entry: Entry): void {
    state.listen();
    state.entries.push(entry);
    if (policy.timeoutMs !== undefined)
      state.arm(policy.resource, policy.timeoutMs, this.engine.clock, (error, clientSending) =>
        answerTimeout(res, error, clientSending),
      );
  }

  /** Sets the RateLimit headers of a passing response: the tightest quota of the resources entered. */
  private describeQuota(res: HttpResponseLike, state: GuardedRequest): void {
    const draft = this.headers.draft;
    if (draft === false) return;
    let best: ReturnType<RoutePolicy['quotaLeft']>;
    for (const entry of state.entries) {
      const quota = this.registry.find(entry.resource)?.quotaLeft();
      if (quota !== undefined && (best === undefined || quota.remaining < best.remaining)) best = quota;
    }
    if (best === undefined || res.headersSent) return;
    const headers = quotaHeaders(best.policy, best.remaining, best.policy.windowSeconds, draft);
    for (const name in headers) res.setHeader(name, headers[name]!);
  }
}

/**
 * Answers a request its route's timeout cut short, unless an answer has begun: 503 with the
 * problem body, or 408 (closing the connection) when the client is still sending the request.
 */
function answerTimeout(res: HttpResponseLike, error: TimeoutError, clientSending: boolean): void {
  if (res.headersSent) return;
  const { status, headers, json } = clientSending ? requestTimeoutResponse(error) : timeoutResponse(error);
  res.writeHead(status, headers);
  res.end(json);
}
