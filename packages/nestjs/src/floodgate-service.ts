import {
  getGuardedMethods,
  isBlockError,
  RuleValidationError,
  type BlockError,
  type Floodgate,
  type RuleIssue,
} from '@floodgate/core';
import type { RuleSet } from '@floodgate/core/rules';
import type {
  BlockResponse,
  GuardVerdict,
  HttpGuard,
  HttpResponseLike,
  RouteParams,
  RoutePolicy,
  RouteOptions,
} from '@floodgate/core/http';
import {
  Inject,
  Injectable,
  RequestMethod,
  type ExecutionContext,
  type OnModuleDestroy,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, MODULE_PATH, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { NESTJS_METADATA_KEYS } from './decorators';
import { FLOODGATE_MODULE_OPTIONS, readModuleOptions, type FloodgateModuleOptions } from './floodgate-module-options';
import type { HandlerRule, HandlerRuleOption } from './handler-rule-options';
import { hotParamReader } from './hot-param-values';

/** One guarded handler: the resource its requests enter, and the route policy that enters it. */
export interface GuardedHandler {
  /** `ControllerClass.methodName`, or the `resource` its decorators name. */
  readonly resource: string;
  /** @internal The core HTTP layer's policy of the resource (value readers, queueing). */
  readonly policy: RoutePolicy;
}

/** The injection token of what the module definition decided (`{ global, exceptionFilter }`). */
export const FLOODGATE_MODULE_DEFINITION = Symbol.for('floodgate.nestjs.moduleDefinition');

/** A controller class, as Nest gives it (`context.getClass()`, a wrapper's `metatype`). */
type ControllerClass = Type;
/** A handler method, as Nest gives it (`context.getHandler()`). */
type HandlerMethod = (...args: never[]) => unknown;

/** What a handler is, found from its controller: for the checks and the declaration. */
interface HandlerSite {
  readonly controller: ControllerClass;
  readonly name: string;
  readonly handler: HandlerMethod;
  /** `GET /users/:id`, for messages; `undefined` when found late (from a request). */
  readonly routes: readonly { readonly method: string; readonly path: string }[] | undefined;
}

const OPTIONS: readonly HandlerRuleOption[] = ['rateLimit', 'circuitBreaker', 'hotParam'];
const DECORATOR: Readonly<Record<HandlerRuleOption, string>> = {
  rateLimit: '@RateLimit',
  circuitBreaker: '@CircuitBreaker',
  hotParam: '@HotParam',
};
const NO_PARAMS: RouteParams = Object.freeze({});
/** Route parameter names in a Nest (path-to-regexp 8) path: `:id`, `*splat`. */
const PATH_PARAM = /[:*]([A-Za-z_$][\w$]*)/g;

/**
 * The NestJS integration's state: the module's options, validated; every controller handler's
 * resource and rules, found and checked at start-up (`onModuleInit`) and declared on the
 * engine; and the one admission path of {@link FloodgateInterceptor} and the answer of
 * {@link FloodgateExceptionFilter}. Exported for custom filters and interceptors; inject
 * `Floodgate` for the engine itself.
 *
 * One guarded entry per request and handler, whatever the handler carries: its requests
 * enter its resource once, in the interceptor, through {@link FloodgateService.admit}, and the
 * entry exits when the response closes (finished, or the client gone), however long a streamed
 * response takes. A second interceptor on the same request (global and per controller) finds
 * the resource entered and passes. The method-wrapping decorators of `@floodgate/core` would
 * make a second entry, and exit when the method returns rather than when the response ends,
 * so a guarded handler carrying one fails at start-up.
 */
@Injectable()
export class FloodgateService implements OnModuleInit, OnModuleDestroy {
  /** The engine guarding the handlers. */
  readonly engine: Floodgate;
  private readonly guard: HttpGuard<unknown, never>;
  private readonly rules: Partial<RuleSet> | undefined;
  private readonly defaults: Readonly<Record<HandlerRuleOption, readonly HandlerRule[]>>;
  private readonly skipIf: ((context: ExecutionContext) => boolean) | undefined;
  private readonly handlers = new Map<ControllerClass, Map<HandlerMethod, GuardedHandler | null>>();
  private withdrawRules: (() => void) | undefined = undefined;

  /** @throws RuleValidationError naming every bad option (at start-up). */
  constructor(
    @Inject(FLOODGATE_MODULE_OPTIONS) options: FloodgateModuleOptions,
    @Inject(FLOODGATE_MODULE_DEFINITION) private readonly definition: { readonly global: boolean },
    // Explicit tokens: injection works without emitDecoratorMetadata too (esbuild, tsx).
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
  ) {
    const normalized = readModuleOptions(options);
    this.guard = normalized.guard;
    this.engine = normalized.guard.engine;
    this.rules = normalized.rules;
    this.defaults = normalized.defaults;
    this.skipIf = normalized.skipIf;
  }

  /**
   * Finds every controller handler, checks it (rules, value sources against its routes,
   * coverage, no core decorators), then declares the module's `rules` and each handler's.
   * @throws RuleValidationError listing every problem, naming the handler and the option.
   */
  onModuleInit(): void {
    const issues: RuleIssue[] = [];
    const found: { site: HandlerSite; rules: Record<HandlerRuleOption, readonly HandlerRule[]> | null }[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      if (typeof wrapper.metatype !== 'function') continue;
      const controller = wrapper.metatype as ControllerClass;
      const modulePaths = this.modulePaths(wrapper.host?.metatype);
      for (const name of this.scanner.getAllMethodNames(controller.prototype as object)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        // A route handler: Nest calls it with the route's resolved arguments.
        const site: HandlerSite = {
          controller,
          name,
          handler: handler as HandlerMethod,
          routes: routesOf(modulePaths, controller, handler as HandlerMethod),
        };
        found.push({ site, rules: this.check(site, issues) });
      }
    }
    this.checkProviders(issues);
    this.checkModuleRules(found, issues);
    if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid Floodgate setup');
    if (this.rules !== undefined) this.withdrawRules = this.engine.declareRules(this.rules);
    for (const { site, rules } of found) this.remember(site, rules === null ? null : this.declare(site, rules));
  }

  /** Withdraws the module's `rules` from the engine. */
  onModuleDestroy(): void {
    this.withdrawRules?.();
    this.withdrawRules = undefined;
  }

  /**
   * The guarded handler a request goes to, or `undefined` when it is not guarded (not HTTP,
   * `@SkipFloodgate()`, `skipIf`). A handler not seen at start-up is checked now, and what is
   * wrong with it fails this request.
   * @throws RuleValidationError for a handler found now with bad options; what `skipIf` throws.
   */
  handlerOf(context: ExecutionContext): GuardedHandler | undefined {
    if (context.getType() !== 'http') return undefined;
    const controller = context.getClass() as ControllerClass;
    const handler = context.getHandler() as HandlerMethod;
    let guarded = this.handlers.get(controller)?.get(handler);
    if (guarded === undefined) guarded = this.guardLate(controller, handler);
    if (guarded === null) return undefined;
    if (this.skipIf !== undefined && this.skipIf(context) === true) return undefined;
    return guarded;
  }

  /**
   * The integration's one admission: enters the handler's resource for a request, unless the
   * request already entered it (through another Floodgate interceptor) or the client already
   * left. Synchronous unless a rule in force may queue the request.
   * @returns `undefined` (go on to the handler), a `BlockError` (to throw), or `'aborted'`.
   */
  admit(
    handler: GuardedHandler,
    request: {
      readonly params?: unknown;
      readonly method?: string;
      readonly originalUrl?: string;
      readonly url?: string;
    },
    response: unknown,
  ): GuardVerdict | Promise<GuardVerdict> {
    const raw = nodeResponse(response);
    // A client that left during the guards: its response's close has fired, so an entry now would never exit.
    if (raw.closed === true || raw.destroyed === true) return 'aborted';
    const params =
      typeof request.params === 'object' && request.params !== null ? (request.params as RouteParams) : NO_PARAMS;
    // The handler's resource, then the API groups the request is in (matched case-insensitively: never narrower than the platform's router).
    const url = request.originalUrl ?? request.url ?? '/';
    return this.guard.guardRoutes(raw, request, request.method ?? 'GET', url, false, {
      policy: handler.policy,
      params,
    });
  }

  /** Records the error a guarded handler threw, for circuit breakers (blocks are no failures). */
  traceError(response: unknown, error: unknown): void {
    if (!isBlockError(error)) this.guard.traceError(nodeResponse(response), error);
  }

  /**
   * Marks the request as answered by a block (no failure for circuit breakers), calls the
   * module's `onBlock`, and returns the response to send: `blockResponse()` with the module's
   * `headers` option, as every Floodgate adapter answers.
   * @throws what `onBlock` throws.
   */
  answer(error: BlockError, request: unknown, response: unknown): BlockResponse {
    this.guard.answer(nodeResponse(response), request, error);
    return this.guard.respond(error);
  }

  /** The handler's rules by option, or `null` when it is not to be guarded; problems go to `issues`. */
  private check(site: HandlerSite, issues: RuleIssue[]): Record<HandlerRuleOption, readonly HandlerRule[]> | null {
    const label = labelOf(site);
    const own = {} as Record<HandlerRuleOption, readonly HandlerRule[]>;
    const rules = {} as Record<HandlerRuleOption, readonly HandlerRule[]>;
    let carried = 0;
    for (const option of OPTIONS) {
      own[option] = this.metadata(option, site.handler);
      const shared = own[option].length > 0 ? own[option] : this.metadata(option, site.controller);
      carried += shared.length;
      rules[option] = shared.length > 0 ? shared : this.defaults[option];
    }
    const skipped =
      this.reflector.getAllAndOverride<boolean | undefined>(NESTJS_METADATA_KEYS.skip, [
        site.handler,
        site.controller,
      ]) === true;
    if (skipped) {
      if (carried > 0)
        issues.push({
          path: label,
          message: 'carries Floodgate rules but @SkipFloodgate() leaves it unguarded: remove one of them',
        });
      return null;
    }
    const covered = this.definition.global || [site.handler, site.controller].some(usesInterceptor);
    if (!covered && carried > 0) {
      issues.push({
        path: label,
        message:
          'carries Floodgate rules but no FloodgateInterceptor guards it: add @UseInterceptors(FloodgateInterceptor) to it or its controller, or use FloodgateModule.forRoot({ global: true })',
      });
    }
    if (covered) {
      const core = getGuardedMethods(site.controller).find((method) => method.name === site.name && !method.static);
      if (core !== undefined) {
        issues.push({
          path: label,
          message:
            `carries a method decorator of @floodgate/core (resource ${core.resource}), which would enter the engine a second time per request ` +
            'and exit when the method returns, not when the response ends: import RateLimit, CircuitBreaker and HotParam from @floodgate/nestjs on controllers',
        });
      }
    }
    const resources = new Set(
      OPTIONS.flatMap((option) => own[option].map((rule) => rule.resource)).filter((r) => r !== undefined),
    );
    if (resources.size > 1)
      issues.push({
        path: label,
        message: `its decorators name different resources (${[...resources].join(', ')}): give one`,
      });
    for (const rule of rules.hotParam) {
      if (rule.source?.kind !== 'param' || site.routes === undefined) continue;
      for (const route of site.routes) {
        const names = paramNames(route.path);
        if (!names.includes(rule.source.name)) {
          issues.push({
            path: `${label} @HotParam.param`,
            message: `"${rule.source.name}" is not a parameter of the route ${route.method} ${route.path} (it has: ${names.join(', ') || 'none'})`,
          });
        }
      }
    }
    return rules;
  }

  /** Declares a checked handler's rules on the engine under its resource. */
  private declare(site: HandlerSite, rules: Record<HandlerRuleOption, readonly HandlerRule[]>): GuardedHandler {
    const resource = resourceOf(site, rules);
    const label = labelOf(site);
    // The fields were validated by the engine's own normalisers when read.
    const route = {
      rateLimit: rules.rateLimit.map((rule) => rule.fields),
      circuitBreaker: rules.circuitBreaker.map((rule) => rule.fields),
      hotParam: rules.hotParam.map((rule) => ({
        ...rule.fields,
        param: hotParamReader(rule.source!, `@HotParam on ${label}`),
      })),
    } as unknown as RouteOptions<unknown, never>;
    return { resource, policy: this.guard.declareRoute(resource, route, label) };
  }

  /** A handler first seen by a request (not found at start-up): checked and declared now. */
  private guardLate(controller: ControllerClass, handler: HandlerMethod): GuardedHandler | null {
    const prototype = controller.prototype as object;
    const name =
      this.scanner
        .getAllMethodNames(prototype)
        .find((key) => (prototype as Record<string, unknown>)[key] === handler) ?? handler.name;
    const site: HandlerSite = { controller, name, handler, routes: undefined };
    const issues: RuleIssue[] = [];
    const rules = this.check(site, issues);
    if (issues.length > 0) throw new RuleValidationError(issues, 'Invalid Floodgate setup');
    const guarded = rules === null ? null : this.declare(site, rules);
    this.remember(site, guarded);
    return guarded;
  }

  private remember(site: HandlerSite, guarded: GuardedHandler | null): void {
    let byHandler = this.handlers.get(site.controller);
    if (byHandler === undefined) {
      byHandler = new Map();
      this.handlers.set(site.controller, byHandler);
    }
    byHandler.set(site.handler, guarded);
  }

  private metadata(option: HandlerRuleOption, target: ControllerClass | HandlerMethod): readonly HandlerRule[] {
    return this.reflector.get<readonly HandlerRule[] | undefined>(NESTJS_METADATA_KEYS[option], target) ?? [];
  }

  /** The NestJS decorators do nothing on a provider's methods: say so rather than limit nothing. */
  private checkProviders(issues: RuleIssue[]): void {
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const type = wrapper.metatype;
      if (typeof type !== 'function' || seen.has(type) || typeof type.prototype !== 'object' || type.prototype === null)
        continue;
      seen.add(type);
      for (const name of this.scanner.getAllMethodNames(type.prototype as object)) {
        const method = (type.prototype as Record<string, unknown>)[name];
        if (typeof method !== 'function') continue;
        const found = OPTIONS.filter((option) => this.metadata(option, method as HandlerMethod).length > 0);
        if (found.length === 0) continue;
        issues.push({
          path: `${type.name}.${name}`,
          message: `${found.map((o) => DECORATOR[o]).join(' ')} from @floodgate/nestjs guards controller handlers only, so on a provider it limits nothing: import it from @floodgate/core for service methods`,
        });
      }
    }
  }

  /** Module rules naming a controller must name one of its handlers (and a route parameter for hotspots). */
  private checkModuleRules(
    found: readonly { site: HandlerSite; rules: Record<HandlerRuleOption, readonly HandlerRule[]> | null }[],
    issues: RuleIssue[],
  ): void {
    if (this.rules === undefined) return;
    const byResource = new Map<string, HandlerSite>();
    /** Per controller name, each handler's resource (`null`: skipped). */
    const byController = new Map<string, Map<string, string | null>>();
    for (const { site, rules } of found) {
      const resource = rules === null ? null : resourceOf(site, rules);
      if (resource !== null) byResource.set(resource, site);
      const handlers = byController.get(site.controller.name) ?? new Map<string, string | null>();
      byController.set(site.controller.name, handlers.set(site.name, resource));
    }
    for (const kind of ['flow', 'circuitBreakers', 'hotParams', 'authority'] as const) {
      (this.rules[kind] ?? []).forEach((rule, i) => {
        const path = `rules.${kind}[${i}]`;
        const site = byResource.get(rule.resource);
        const dot = rule.resource.indexOf('.');
        const handlers = dot > 0 ? byController.get(rule.resource.slice(0, dot)) : undefined;
        if (site === undefined && handlers !== undefined) {
          const [controller, method] = [rule.resource.slice(0, dot), rule.resource.slice(dot + 1)];
          const resource = handlers.get(method);
          const why =
            resource === undefined
              ? `names no handler of ${controller} (it has: ${[...handlers.keys()].join(', ')})`
              : resource === null
                ? 'names a handler that @SkipFloodgate() leaves unguarded'
                : `names a handler entered as ${JSON.stringify(resource)}: use that name`;
          issues.push({ path: `${path}.resource`, message: `${JSON.stringify(rule.resource)} ${why}` });
        }
        if (kind !== 'hotParams' || site === undefined) return;
        const hot = rule as RuleSet['hotParams'][number];
        if (hot.paramKey === undefined) {
          issues.push({
            path: `${path}.paramIndex`,
            message:
              'a handler resource is entered before its arguments are resolved: name a route parameter with paramKey, or use @HotParam',
          });
          return;
        }
        for (const route of site.routes ?? []) {
          const names = paramNames(route.path);
          if (!names.includes(hot.paramKey)) {
            issues.push({
              path: `${path}.paramKey`,
              message: `"${hot.paramKey}" is not a parameter of the route ${route.method} ${route.path} (it has: ${names.join(', ') || 'none'})`,
            });
          }
        }
      });
    }
  }

  /** The path(s) a module is mounted at by `RouterModule` (for route parameters), if any. */
  private modulePaths(module: unknown): readonly string[] {
    if (typeof module !== 'function') return [''];
    const path: unknown =
      Reflect.getMetadata(MODULE_PATH + this.modules.applicationId, module) ?? Reflect.getMetadata(MODULE_PATH, module);
    return typeof path === 'string' ? [path] : [''];
  }
}

/** Whether a controller or handler lists `FloodgateInterceptor` in `@UseInterceptors()`. */
function usesInterceptor(target: ControllerClass | HandlerMethod): boolean {
  const interceptors = Reflect.getMetadata(INTERCEPTORS_METADATA, target) as readonly unknown[] | undefined;
  return (interceptors ?? []).some((item) => {
    const type = typeof item === 'function' ? item : (item as { constructor?: unknown } | null)?.constructor;
    return (
      typeof type === 'function' && (type as { readonly floodgateInterceptor?: boolean }).floodgateInterceptor === true
    );
  });
}

/** Each route of a handler: method and full path (module, controller and method paths). */
function routesOf(
  modulePaths: readonly string[],
  controller: ControllerClass,
  handler: HandlerMethod,
): { method: string; path: string }[] {
  const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? 'GET';
  const routes: { method: string; path: string }[] = [];
  for (const base of modulePaths) {
    for (const prefix of asList(Reflect.getMetadata(PATH_METADATA, controller))) {
      for (const path of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
        routes.push({
          method,
          path: `/${[base, prefix, path]
            .map((p) => p.replace(/^\/+|\/+$/g, ''))
            .filter((p) => p !== '')
            .join('/')}`,
        });
      }
    }
  }
  return routes;
}

function asList(path: unknown): string[] {
  if (Array.isArray(path)) return path.map(String);
  return typeof path === 'string' ? [path] : [''];
}

function paramNames(path: string): string[] {
  return [...path.matchAll(PATH_PARAM)].map((match) => match[1]!);
}

/** The handler's resource: the one its own decorators name (never its controller's or a default's), else `Controller.method`. */
function resourceOf(site: HandlerSite, rules: Record<HandlerRuleOption, readonly HandlerRule[]>): string {
  return (
    OPTIONS.flatMap((option) => rules[option]).find((rule) => rule.resource !== undefined)?.resource ??
    `${site.controller.name}.${site.name}`
  );
}

function labelOf(site: HandlerSite): string {
  const route = site.routes?.[0];
  return `${site.controller.name}.${site.name}${route === undefined ? '' : ` (${route.method} ${route.path})`}`;
}

/** The Node response of Express's `res` (itself) or Fastify's `reply` (`reply.raw`). */
function nodeResponse(
  response: unknown,
): HttpResponseLike & { readonly closed?: boolean; readonly destroyed?: boolean } {
  const raw = (response as { readonly raw?: { readonly on?: unknown } }).raw;
  return (raw !== undefined && typeof raw.on === 'function' ? raw : response) as HttpResponseLike;
}
