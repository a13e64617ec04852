import { compileAuthorityRules } from '../authority/compile-authority-rules';
import { compileCircuitBreakerRules } from '../circuit-breaker/compile-circuit-breaker-rules';
import { compileFlowRules, namedOrigins } from '../flow/compile-flow-rules';
import { compileHotParamRules } from '../hot-param/compile-hot-param-rules';
import { withClusterHotParams } from '../cluster/with-cluster-hot-params';
import type { RuleSet } from '../rules/rule-set';
import type { CompileContext } from './compile-context';
import { ResourceRules } from './resource-rules';

/** The compiled form of a rule set. */
export interface CompiledRules {
  /** The rules of each resource that has any. */
  readonly byResource: ReadonlyMap<string, ResourceRules>;
  /** Resources always tracked, whatever the resource cap: those with rules and `relate` targets. */
  readonly pinned: ReadonlySet<string>;
}

/**
 * State kept for a rule that can be told its rule is no longer in force (entries admitted
 * under it may still exit through it).
 */
export interface Retirable {
  retire(): void;
}

type Grouped = { [K in keyof RuleSet]: RuleSet[K][number][] };

/**
 * Turns rule sets into per-resource checkers in the fixed check order, keeping the state of
 * rules that did not change between compiles.
 */
export class RuleCompiler {
  private pool = new Map<string, unknown>();

  compile(rules: RuleSet, base: Omit<CompileContext, 'reuse'>): CompiledRules {
    const next = new Map<string, unknown>();
    const seen = new Map<string, number>();
    const ctx: CompileContext = {
      ...base,
      lookupNode: base.lookupNode,
      reuse: <T>(kind: string, rule: object, make: () => T): T => {
        const identity = `${kind}\u0000${JSON.stringify(rule)}`;
        const nth = seen.get(identity) ?? 0;
        seen.set(identity, nth + 1);
        const key = `${identity}#${nth}`;
        const value = this.pool.has(key) ? (this.pool.get(key) as T) : make();
        next.set(key, value);
        return value;
      },
    };
    const byResource = new Map<string, ResourceRules>();
    const pinned = new Set<string>();
    for (const [resource, group] of groupByResource(rules)) {
      const breakers = compileCircuitBreakerRules(group.circuitBreakers, ctx);
      const checkers = [
        ...compileAuthorityRules(group.authority, ctx),
        ...withClusterHotParams(compileHotParamRules(group.hotParams, ctx), ctx),
        ...compileFlowRules(group.flow, ctx),
        ...breakers,
      ];
      const byOrigin = group.flow.some((rule) => rule.limitOrigin !== 'default');
      byResource.set(resource, new ResourceRules(checkers, breakers, byOrigin ? namedOrigins(group.flow) : undefined, breakers));
      pinned.add(resource);
      for (const rule of group.flow) if (rule.refResource !== undefined) pinned.add(rule.refResource);
    }
    for (const [key, value] of this.pool) if (!next.has(key)) (value as Partial<Retirable>).retire?.();
    this.pool = next;
    return { byResource, pinned };
  }
}

function groupByResource(rules: RuleSet): Map<string, Grouped> {
  const groups = new Map<string, Grouped>();
  const groupOf = (resource: string): Grouped => {
    let group = groups.get(resource);
    if (group === undefined) {
      group = { authority: [], hotParams: [], flow: [], circuitBreakers: [] };
      groups.set(resource, group);
    }
    return group;
  };
  for (const rule of rules.authority) groupOf(rule.resource).authority.push(rule);
  for (const rule of rules.hotParams) groupOf(rule.resource).hotParams.push(rule);
  for (const rule of rules.flow) groupOf(rule.resource).flow.push(rule);
  for (const rule of rules.circuitBreakers) groupOf(rule.resource).circuitBreakers.push(rule);
  return groups;
}
