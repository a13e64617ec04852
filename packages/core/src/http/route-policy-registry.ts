import type { Floodgate } from '../engine/floodgate';
import type { RuleSetOptions } from '../engine/kinds';
import { RuleValidationError } from '../kernel/errors';
import { at } from './normalize-http-options';
import type { RouteRules } from './normalize-route-options';
import { RoutePolicy } from './route-policy';

const registries = new WeakMap<Floodgate, RoutePolicyRegistry>();

/**
 * The {@link RoutePolicy} of each HTTP resource of one engine. Declaring a route's rules puts
 * them on the engine (`declareRules`, once per route and middleware) and merges the route's
 * params and fallback into its policy.
 */
export class RoutePolicyRegistry {
  private readonly policies = new Map<string, RoutePolicy>();

  private constructor(private readonly engine: Floodgate) {}

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

  /**
   * Declares a route's rules on the engine under `resource` and merges its params and fallback
   * into the route's policy.
   * @throws RuleValidationError when the route already has another fallback (`path` names the option).
   */
  declare(resource: string, rules: RouteRules<unknown, unknown>, path: string, context: string): RoutePolicy {
    let policy = this.policies.get(resource);
    if (policy === undefined) {
      policy = new RoutePolicy(resource, this.engine);
      this.policies.set(resource, policy);
    }
    if (rules.fallback !== undefined && policy.fallback !== undefined && policy.fallback !== rules.fallback) {
      throw new RuleValidationError(
        [{ path: at(path, 'fallback'), message: `route "${resource}" already has a fallback from another Floodgate middleware; a route has one` }],
        context,
      );
    }
    let next = policy.readerCount;
    const readers = [];
    const hotParams = [];
    for (const { rule, param } of rules.hotParams) {
      if (typeof param === 'string') {
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
    for (const reader of readers) policy.addReader(reader);
    if (rules.fallback !== undefined) policy.fallback = rules.fallback;
    return policy;
  }
}
