import type { Floodgate } from '../engine/floodgate';
import type { ResourceInfo } from '../engine/resource-state';
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
  type NormalizedResilienceOptions,
  type RouteRuleOption,
  type RouteRules,
} from './normalize-options';
import { quotaHeaders } from './rate-limit-headers';
import type { ApiGroupMatcher } from '../api-group/api-group';
import {
  foldCase,
  requestPath,
  type PathMatching,
  type RouteParams,
  type RoutePattern,
} from '../api-group/route-pattern';
import { UNMATCHED_RESOURCE } from './http-options';
import type { HttpRequestReader } from './request-keys';
import type { RequestPriority } from './request-priority';
import type { Priority } from '../kernel/priority';
import { RoutePolicyRegistry, templateParamNames, type RoutePolicy } from './route-policy';

/**
 * What guarding a request decided: `undefined` (it passed: go on to the handler), a
 * `BlockError` (answer it with {@link HttpGuard.answer}), or `'aborted'` (the client left
 * before the request was admitted: answer nothing).
 */
export type GuardVerdict = BlockError | 'aborted' | undefined;

const NO_ARGS: readonly unknown[] = Object.freeze([]);
const NO_PARAMS: RouteParams = Object.freeze({});
const ANSWER_KEYS = ['floodgate', 'onBlock', 'fallback', 'headers'] as const;

/**
 * Reads the request properties most frameworks keep under these names (Express, Fastify and
 * NestJS requests: `req.ip`, `req.query`, `req.user`); Koa's adapter gives its own.
 */
const PROPERTY_READER: HttpRequestReader<unknown> = {
  ip: (req) => (req as { readonly ip?: string }).ip,
  query: (req) => (req as { readonly query?: unknown }).query,
  user: (req) => (req as { readonly user?: unknown }).user,
};

interface Route {
  readonly pattern: RoutePattern;
  readonly policy: RoutePolicy;
}

/** The route a request matched, as the framework's router found it (every route guarding). */
export interface MatchedRoute {
  /** The route's policy, from {@link HttpGuard.everyRoutePolicy} or {@link HttpGuard.unmatchedPolicy}. */
  readonly policy: RoutePolicy;
  /** Its path parameters, as the framework read them. */
  readonly params: RouteParams;
}

/**
 * Where a request is on its way through the resources it falls under: the route patterns, then
 * its matched route, then the API groups.
 */
interface Walk {
  /** The method patterns are matched with (`HEAD` read as `GET` unless a `HEAD` pattern matches). */
  readonly method: string;
  /** The request's own method (groups read `HEAD` themselves). */
  readonly requestMethod: string;
  readonly path: string;
  readonly folded: string | undefined;
  readonly route: MatchedRoute | undefined;
  readonly groups: readonly ApiGroupMatcher[];
  phase: number;
  index: number;
  params: RouteParams;
}

/** The entry options reused by every synchronous admission of a guard (tryEntry keeps none of them). */
interface Scratch {
  readonly inbound: true;
  origin: string;
  priority: Priority;
  args: readonly unknown[];
  params: RouteParams | undefined;
  keys: Record<string, unknown> | undefined;
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
  private readonly priority: RequestPriority<Req>;
  private readonly onBlock: ((error: BlockError, req: Req) => void) | undefined;
  private readonly fallback: F | undefined;
  private readonly headers: NormalizedHeaders;
  private readonly wouldBlockHeader: string | undefined;
  private readonly isFailure: (status: number, error: unknown) => boolean;
  private readonly registry: RoutePolicyRegistry;
  private readonly routes: readonly Route[];
  private readonly headRoutes: readonly Route[];
  private readonly caseSensitive: boolean;
  private readonly semicolon: boolean;
  private readonly rules: RouteRules<Req, F> | undefined;
  private readonly fixed: RoutePolicy | undefined;
  private readonly byMethod = new Map<string, Map<string, RoutePolicy>>();
  private readonly scratch: Scratch = {
    inbound: true,
    origin: '',
    priority: 'default',
    args: NO_ARGS,
    params: undefined,
    keys: undefined,
  };
  private readonly reader: HttpRequestReader<Req>;
  /** Whether every request the framework routes is to be guarded by its route (the `everyRoute` option). */
  readonly everyRoute: boolean;
  private readonly groupTimeouts: boolean;

  private constructor(
    options: NormalizedHttpOptions<Req, F>,
    private readonly name: string,
    routes: readonly { readonly pattern: RoutePattern; readonly rules: RouteRules<Req, F> }[],
    rules: RouteRules<Req, F> | undefined,
    resource: string | undefined,
    matching: PathMatching | undefined,
    reader: HttpRequestReader<Req> | undefined,
    extra?: Pick<NormalizedResilienceOptions<Req, F>, 'everyRoute' | 'groups'>,
  ) {
    this.engine = options.engine;
    this.origin = options.origin;
    this.priority = options.priority;
    this.onBlock = options.onBlock;
    this.fallback = options.fallback;
    this.headers = options.headers;
    this.wouldBlockHeader = options.wouldBlockHeader;
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
    const base: HttpRequestReader<Req> = reader ?? PROPERTY_READER;
    this.reader = options.user === undefined ? base : { ip: base.ip, query: base.query, user: options.user };
    this.everyRoute = extra?.everyRoute === true;
    const groups = extra?.groups ?? [];
    this.groupTimeouts = groups.some(({ rules: r }) => r.timeoutMs !== undefined);
    if (groups.length > 0) {
      this.engine.declareRules({ apiGroups: groups.map(({ group }) => group) });
      groups.forEach(({ group, rules: r }, i) =>
        this.registry.declare(group.name, r as RouteRules<unknown, unknown>, `groups[${i}]`, this.context),
      );
    }
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
  static resilience<Req, F>(
    options: unknown,
    name: string,
    matching?: PathMatching,
    reader?: HttpRequestReader<Req>,
  ): HttpGuard<Req, F> {
    const { http, routes, everyRoute, groups } = normalizeResilienceOptions<Req, F>(options, name);
    return new HttpGuard(http, name, routes, undefined, undefined, matching, reader, { everyRoute, groups });
  }

  /**
   * A guard for a per-route factory (`rateLimit()`, `circuitBreaker()`, `hotParam()`): its rules
   * are declared on each route it is used on, the first time, unless `resource` names one.
   * @throws RuleValidationError naming every bad option and rule field.
   */
  static route<Req, F>(
    option: RouteRuleOption,
    options: unknown,
    name: string,
    reader?: HttpRequestReader<Req>,
  ): HttpGuard<Req, F> {
    const { http, rules, resource } = normalizeRouteFactoryOptions<Req, F>(option, options, name);
    return new HttpGuard(http, name, [], rules, resource, undefined, reader);
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
    return new HttpGuard(http, name, [], undefined, undefined, undefined, undefined);
  }

  private get context(): string {
    return `Invalid ${this.name} options`;
  }

  /**
   * The policy of the route `method template` when every route is guarded: the resource
   * `'METHOD template'`, with no rules of its own unless loaded (or declared by other
   * middleware). `template` must be the framework's registered template, never a request path.
   */
  everyRoutePolicy(method: string, template: string): RoutePolicy {
    return this.policyOf(method, template, () => this.registry.policy(`${method} ${template}`));
  }

  /** The policy of the route `method template`, made by `make` the first time (per guard: bounded by its routes). */
  private policyOf(method: string, template: string, make: () => RoutePolicy): RoutePolicy {
    let byTemplate = this.byMethod.get(method);
    if (byTemplate === undefined) {
      byTemplate = new Map();
      this.byMethod.set(method, byTemplate);
    }
    let policy = byTemplate.get(template);
    if (policy === undefined) {
      policy = make();
      byTemplate.set(template, policy);
    }
    return policy;
  }

  /** The policy of every request no route matches, {@link UNMATCHED_RESOURCE}. */
  get unmatchedPolicy(): RoutePolicy {
    return this.registry.policy(UNMATCHED_RESOURCE);
  }

  /** Whether a route pattern or API group of the guard has a `timeoutMs` (adapters then watch every handler). */
  get hasTimeouts(): boolean {
    return this.routes.some((route) => route.policy.timeoutMs !== undefined) || this.groupTimeouts;
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
    return this.policyOf(method, template, () => {
      const resource = `${method} ${template}`;
      const names = [...new Set([...(paramNames ?? templateParamNames(template)), ...Object.keys(params ?? {})])];
      return this.registry.declare(
        resource,
        this.rules as RouteRules<unknown, unknown>,
        '',
        `Invalid ${this.name} options on ${resource}`,
        names,
      );
    });
  }

  /**
   * Guards a request by the route patterns, its matched route and the API groups: enters, in
   * order, the resource of every pattern that matches `method` and `url` (the request target),
   * then `route` (the route the framework matched, when every route is guarded), then every API
   * group in force whose patterns match, each unless the request entered it already. A `HEAD`
   * request is matched as `GET` unless a `HEAD` pattern matches it (groups: unless one of their
   * patterns does). `caseSensitive` overrides the guard's path matching for this request
   * (Express reads its app setting per request). Synchronous unless the request waits in a queue. Throws
   * what `origin`, `priority` or a param function throws.
   */
  guardRoutes(
    res: HttpResponseLike,
    req: Req,
    method: string,
    url: string,
    caseSensitive = this.caseSensitive,
    route?: MatchedRoute,
  ): GuardVerdict | Promise<GuardVerdict> {
    const groups = this.registry.groups();
    if (this.routes.length === 0 && route === undefined && groups.length === 0) return undefined;
    // The path is read only when a pattern or group is to match it (a matched route alone needs none).
    const matching = this.routes.length > 0 || groups.length > 0;
    const path = matching ? requestPath(url, this.semicolon) : '';
    const folded = matching && !caseSensitive ? foldCase(path) : undefined;
    const walk: Walk = {
      method: method === 'HEAD' && matching && !this.headMatches(path, folded) ? 'GET' : method,
      requestMethod: method,
      path,
      folded,
      route,
      groups,
      phase: 0,
      index: 0,
      params: NO_PARAMS,
    };
    let state: GuardedRequest | undefined;
    let origin = '';
    let priority: Priority = 'default';
    for (let policy = this.step(walk); policy !== undefined; policy = this.step(walk)) {
      if (state === undefined) {
        origin = this.originOf(req);
        state = GuardedRequest.of(res, this.isFailure);
        if (state.closed) return 'aborted';
        priority = this.priority(req, state.request);
      }
      if (state.entered(policy.resource)) continue;
      const info = policy.info;
      if (info.inboundMayWait) return this.walkQueued(state, res, req, origin, priority, walk, policy);
      const block = this.enterNow(state, res, req, origin, priority, policy, info, walk.params);
      if (block !== undefined) return block;
    }
    if (state !== undefined && this.headers.onPass) this.describeQuota(res, state);
    return undefined;
  }

  /** The next resource of the request's walk (its params in `walk.params`), or `undefined` at the end. */
  private step(walk: Walk): RoutePolicy | undefined {
    if (walk.phase === 0) {
      const routes = this.routes;
      while (walk.index < routes.length) {
        const route = routes[walk.index++]!;
        const params = route.pattern.matchPath(walk.method, walk.path, walk.folded, route.policy.readsParams);
        if (params === undefined) continue;
        walk.params = params;
        return route.policy;
      }
      walk.phase = 1;
    }
    if (walk.phase === 1) {
      walk.phase = 2;
      walk.index = 0;
      if (walk.route !== undefined) {
        walk.params = walk.route.params;
        return walk.route.policy;
      }
    }
    if (walk.phase === 2) {
      const groups = walk.groups;
      while (walk.index < groups.length) {
        const group = groups[walk.index++]!;
        if (!group.matches(walk.requestMethod, walk.path, walk.folded)) continue;
        walk.params = NO_PARAMS;
        return this.registry.policy(group.name);
      }
      walk.phase = 3;
    }
    return undefined;
  }

  /**
   * Guards a request on one route (a per-route factory or Fastify route config), unless it
   * already entered the route's resource. Synchronous unless the request waits in the route's queue.
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
    const priority = this.priority(req, state.request);
    const info = policy.info;
    const verdict = info.inboundMayWait
      ? this.enterQueued(state, res, req, origin, priority, policy, info, params)
      : this.enterNow(state, res, req, origin, priority, policy, info, params);
    return verdict instanceof Promise
      ? verdict.then((v) => this.passed(res, state, v))
      : this.passed(res, state, verdict);
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
    // No request has a timeout until one is armed: then nothing is watched, and nothing looked up.
    return GuardedRequest.anyArmed && GuardedRequest.find(res)?.handlerStarts() === true;
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

  /**
   * The rest of a walk once a resource may queue: each resource in turn, synchronously until a
   * request waits in a queue, then the rest once it is admitted. `first` (already checked for
   * entry) starts it; without one, the walk's next resource does.
   */
  private walkQueued(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    priority: Priority,
    walk: Walk,
    first: RoutePolicy | undefined,
  ): GuardVerdict | Promise<GuardVerdict> {
    for (let policy = first ?? this.step(walk); policy !== undefined; policy = this.step(walk)) {
      if (policy !== first && state.entered(policy.resource)) continue;
      const params = walk.params;
      const info = policy.info;
      const verdict = info.inboundMayWait
        ? this.enterQueued(state, res, req, origin, priority, policy, info, params)
        : this.enterNow(state, res, req, origin, priority, policy, info, params);
      if (verdict instanceof Promise)
        return verdict.then((v) =>
          v !== undefined ? v : this.walkQueued(state, res, req, origin, priority, walk, undefined),
        );
      if (verdict !== undefined) return verdict;
    }
    return this.passed(res, state, undefined);
  }

  private enterNow(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    priority: Priority,
    policy: RoutePolicy,
    info: ResourceInfo,
    params: RouteParams,
  ): BlockError | 'aborted' | undefined {
    if (state.closed) return 'aborted';
    const options = this.scratch;
    options.origin = origin;
    options.priority = priority;
    options.params = params;
    let result: Entry | BlockError;
    try {
      options.args = policy.args(req, params);
      options.keys = policy.keys(req, state.request, this.reader, params, info);
      result = this.engine.tryEntry(policy.resource, options);
    } catch (error) {
      // A throwing param function or check: what the request took on its way goes back too.
      state.refuse();
      throw error;
    } finally {
      options.args = NO_ARGS;
      options.params = undefined;
      options.keys = undefined;
    }
    return this.admitted(state, res, policy, result);
  }

  /** An entry taken at once is held for the request; a block refuses it, and is its verdict. */
  private admitted(
    state: GuardedRequest,
    res: HttpResponseLike,
    policy: RoutePolicy,
    result: Entry | BlockError,
  ): BlockError | undefined {
    if (!(result instanceof Entry)) {
      state.refuse();
      return result;
    }
    this.hold(state, res, policy, result);
    return undefined;
  }

  /**
   * Enters a resource that may queue the request: at once when it need not wait (as
   * {@link HttpGuard.enterNow}), else once the queue admits it. Only a request that waits is
   * listened to and given a signal, which its client leaving aborts.
   */
  private enterQueued(
    state: GuardedRequest,
    res: HttpResponseLike,
    req: Req,
    origin: string,
    priority: Priority,
    policy: RoutePolicy,
    info: ResourceInfo,
    params: RouteParams,
  ): GuardVerdict | Promise<GuardVerdict> {
    if (state.closed) return 'aborted';
    let result: Entry | BlockError | Promise<Entry>;
    try {
      const args = policy.args(req, params);
      const keys = policy.keys(req, state.request, this.reader, params, info);
      const options = { inbound: true, origin, priority, args, params, keys };
      result = this.engine.enterOrWait(policy.resource, options, () => {
        // A place in the queue is held: the client leaving must abort it.
        state.listen();
        state.queued = true;
        return state.signal;
      });
    } catch (error) {
      // A throwing param function or check: what the request took on its way goes back too.
      // (It throws before any wait begins: the request is not queued.)
      state.refuse();
      throw error;
    }
    if (result instanceof Promise) return this.awaitQueued(state, res, policy, result);
    return this.admitted(state, res, policy, result);
  }

  /** The rest of {@link HttpGuard.enterQueued} for a request that waits in a queue. */
  private async awaitQueued(
    state: GuardedRequest,
    res: HttpResponseLike,
    policy: RoutePolicy,
    admitted: Promise<Entry>,
  ): Promise<GuardVerdict> {
    let entry: Entry;
    try {
      entry = await admitted;
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
    state.hold(entry);
    const wouldBlock = this.wouldBlockHeader === undefined ? undefined : entry.wouldBlock;
    if (wouldBlock !== undefined && !res.headersSent) res.setHeader(this.wouldBlockHeader!, wouldBlock.kind);
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
