import { ApiGroupMatcher } from '../api-group/api-group';
import type { Floodgate } from '../engine/floodgate';
import type { RuleSetOptions } from '../engine/kinds';
import type { ResourceInfo } from '../engine/resource-state';
import { RuleValidationError, type QuotaPolicy } from '../kernel/errors';
import { join as at } from '../kernel/rule-reader';
import type { HttpParamReader } from './http-options';
import { missingParams, type RouteRules } from './normalize-options';
import type { RouteParams } from '../api-group/route-pattern';
import { readRequestKeys, type HttpRequestReader, type NodeRequestLike } from './request-keys';

const NO_ARGS: readonly unknown[] = Object.freeze([]);

/** A route's QPS quota as passing responses describe it: the policy and the resource it counts. */
interface PassQuota {
  readonly policy: QuotaPolicy;
  readonly threshold: number;
}

/**
 * What the HTTP layer knows of one HTTP resource (a route) on one engine: how to read the
 * values of its function-valued hotspot params, its fallback and its timeout; and, from the
 * engine, whether its rules in force may queue a request (then it is entered with `enter()`
 * and an abort signal, else with the cheaper `tryEntry()`) and whether they read route
 * parameters. Shared by every Floodgate middleware that guards the route, so a request enters
 * each resource once whichever middleware gets there first.
 */
export class RoutePolicy {
  /** The resource, e.g. `'GET /users/:id'`. */
  readonly resource: string;
  /** The route's fallback, if one was declared. */
  fallback: unknown = undefined;
  /** The route's timeout, if one was declared. */
  timeoutMs: number | undefined = undefined;
  private readonly readers: HttpParamReader<unknown>[] = [];
  /** The QPS quotas passing responses describe, read from the rules in force when first needed. */
  private quotas: readonly PassQuota[] | undefined = undefined;

  constructor(
    resource: string,
    private readonly engine: Floodgate,
  ) {
    this.resource = resource;
  }

  /**
   * What the rules in force on the resource need: whether they may queue an inbound request
   * (`inboundMayWait`: throttling, cluster rules), the key sources they read. Looked up on the
   * engine on each read: a guard reads it once per request and resource, and hands it to
   * {@link RoutePolicy.keys}.
   */
  get info(): ResourceInfo {
    return this.engine.resourceInfo(this.resource);
  }

  /** Whether the resource's requests need their path parameters (hotspot rules or param functions read them). */
  get readsParams(): boolean {
    if (this.readers.length > 0) return true;
    const info = this.engine.resourceInfo(this.resource);
    return info.paramKeys.length > 0 || info.keySources.some((source) => source.from === 'param');
  }

  /**
   * The entry's `keys`: the values of the key sources the resource's rules in force read
   * (`info`, from {@link RoutePolicy.info}), from the request; `undefined` (nothing read) when
   * they read none.
   */
  keys<Req>(
    req: Req,
    node: NodeRequestLike | undefined,
    reader: HttpRequestReader<Req>,
    params: RouteParams | undefined,
    info: ResourceInfo,
  ): Record<string, unknown> | undefined {
    const sources = info.keySources;
    return sources.length === 0 ? undefined : readRequestKeys(sources, req, node, reader, params);
  }

  /** How many function-valued params the route reads: the next one's `paramIndex`. */
  get readerCount(): number {
    return this.readers.length;
  }

  /** Adds a function-valued param; hotspot rules read it at `paramIndex` {@link RoutePolicy.readerCount} − 1. */
  addReader(reader: HttpParamReader<unknown>): void {
    this.readers.push(reader);
  }

  /** The entry's `args`: the value of each function-valued param. Allocates only when there is one. */
  args(req: unknown, params: RouteParams): readonly unknown[] {
    const readers = this.readers;
    if (readers.length === 0) return NO_ARGS;
    const args = new Array<unknown>(readers.length);
    for (let i = 0; i < readers.length; i++) args[i] = readers[i]!(req, params);
    return args;
  }

  /**
   * The tightest QPS quota of the resource's flow rules that count every caller (`reject`,
   * `limitOrigin: 'default'`, `direct`) and what is left of it now, for a passing response's
   * RateLimit headers; `undefined` when it has none.
   */
  quotaLeft(): { readonly policy: QuotaPolicy; readonly remaining: number } | undefined {
    const quotas = (this.quotas ??= this.readQuotas());
    if (quotas.length === 0) return undefined;
    const passed = this.engine.stats(this.resource)?.lastSecond.pass ?? 0;
    let best: { policy: QuotaPolicy; remaining: number } | undefined;
    for (const { policy, threshold } of quotas) {
      const remaining = Math.max(0, Math.floor(threshold - passed));
      if (best === undefined || remaining < best.remaining) best = { policy, remaining };
    }
    return best;
  }

  /** Forgets the quotas read from the rules (they changed). */
  rulesChanged(): void {
    this.quotas = undefined;
  }

  private readQuotas(): readonly PassQuota[] {
    const quotas: PassQuota[] = [];
    for (const rule of this.engine.getRules().flow) {
      if (
        rule.resource !== this.resource ||
        rule.metric !== 'qps' ||
        rule.behavior !== 'reject' ||
        rule.strategy !== 'direct' ||
        rule.limitOrigin !== 'default'
      )
        continue;
      quotas.push({
        policy: { name: 'flow', quota: Math.floor(rule.threshold), windowSeconds: 1 },
        threshold: rule.threshold,
      });
    }
    return quotas;
  }
}

const registries = new WeakMap<Floodgate, RoutePolicyRegistry>();

/**
 * The {@link RoutePolicy} of each HTTP resource of one engine. Declaring a route's rules puts
 * them on the engine (`declareRules`, once per route and middleware) and merges the route's
 * params, fallback and timeout into its policy.
 */
export class RoutePolicyRegistry {
  private readonly policies = new Map<string, RoutePolicy>();
  private watching = false;
  private groupMatchers: readonly ApiGroupMatcher[] | undefined = undefined;

  private constructor(private readonly engine: Floodgate) {
    engine.on('rulesLoaded', ({ kinds }) => {
      if (kinds.includes('apiGroups')) this.groupMatchers = undefined;
    });
  }

  /** The registry of `engine`, made on first use. */
  static of(engine: Floodgate): RoutePolicyRegistry {
    let registry = registries.get(engine);
    if (registry === undefined) {
      registry = new RoutePolicyRegistry(engine);
      registries.set(engine, registry);
    }
    return registry;
  }

  /** The policy of `resource`, if an HTTP route declared it. */
  find(resource: string): RoutePolicy | undefined {
    return this.policies.get(resource);
  }

  /** The policy of `resource`, made (with no rules of its own) the first time: a route every route guarding names, a group. */
  policy(resource: string): RoutePolicy {
    let policy = this.policies.get(resource);
    if (policy === undefined) {
      policy = new RoutePolicy(resource, this.engine);
      this.policies.set(resource, policy);
    }
    return policy;
  }

  /** The API groups in force (loaded over declared), compiled for matching; rebuilt when they change. */
  groups(): readonly ApiGroupMatcher[] {
    return (this.groupMatchers ??= this.engine.getRules().apiGroups.map((group) => new ApiGroupMatcher(group)));
  }

  /** Keeps the policies' quotas in step with the rules in force (for passing responses' headers). */
  watchQuotas(): void {
    if (this.watching) return;
    this.watching = true;
    this.engine.on('rulesLoaded', ({ resources }) => {
      for (const resource of resources) this.policies.get(resource)?.rulesChanged();
    });
  }

  /**
   * Declares a route's rules on the engine under `resource` and merges its params, fallback
   * and timeout into the route's policy. `paramNames`, when known, are the route's path
   * parameters: a hotspot `param` naming another is refused (it would limit nothing).
   * @throws RuleValidationError when the route already has another fallback or timeout, or a
   *   `param` names no parameter of the route (`path` names the option).
   */
  declare(
    resource: string,
    rules: RouteRules<unknown, unknown>,
    path: string,
    context: string,
    paramNames?: readonly string[],
  ): RoutePolicy {
    const policy = this.policies.get(resource);
    const issues: { path: string; message: string }[] =
      paramNames === undefined ? [] : missingParams(rules, paramNames, path);
    if (rules.fallback !== undefined && policy?.fallback !== undefined && policy.fallback !== rules.fallback) {
      issues.push({
        path: at(path, 'fallback'),
        message: `route "${resource}" already has a fallback from another Floodgate middleware; a route has one`,
      });
    }
    if (rules.timeoutMs !== undefined && policy?.timeoutMs !== undefined && policy.timeoutMs !== rules.timeoutMs) {
      issues.push({
        path: at(path, 'timeoutMs'),
        message: `route "${resource}" already has timeoutMs ${policy.timeoutMs} from another Floodgate middleware; a route has one`,
      });
    }
    if (issues.length > 0) throw new RuleValidationError(issues, context);
    const declared = this.policy(resource);
    let next = declared.readerCount;
    const readers = [];
    const hotParams = [];
    for (const { rule, param } of rules.hotParams) {
      if (param === undefined) {
        hotParams.push({ ...rule, resource });
      } else if (typeof param === 'string') {
        hotParams.push({ ...rule, resource, paramKey: param });
      } else {
        hotParams.push({ ...rule, resource, paramIndex: next++ });
        readers.push(param);
      }
    }
    const set = {
      flow: rules.flow.map((rule) => ({ ...rule, resource })),
      circuitBreakers: rules.circuitBreakers.map((rule) => ({ ...rule, resource })),
      hotParams,
    } as unknown as RuleSetOptions;
    if (set.flow!.length + set.circuitBreakers!.length + set.hotParams!.length > 0) this.engine.declareRules(set);
    for (const reader of readers) declared.addReader(reader);
    if (rules.fallback !== undefined) declared.fallback = rules.fallback;
    if (rules.timeoutMs !== undefined) declared.timeoutMs = rules.timeoutMs;
    declared.rulesChanged();
    return declared;
  }
}

/**
 * The parameter names of a framework's route template: `:name` and `*name` (Express 5,
 * @koa/router), `:name(regex)` and `*` (Fastify), `{/:name}` optional groups.
 */
export function templateParamNames(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(/[:*](?:"([^"]+)"|([A-Za-z_$][\w$]*))|(?<![:\w])\*(?![\w"])/g)) {
    names.push(match[1] ?? match[2] ?? '*');
  }
  return names;
}
