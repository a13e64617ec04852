import { ClusterKeys } from '../cluster/cluster-keys';
import { compileClusterFlowRule } from '../cluster/compile-cluster-flow-rule';
import type { Checker } from '../engine/checker';
import type { CompileContext } from '../engine/compile-context';
import { createTrafficController } from './create-traffic-controller';
import type { FlowRule } from './flow-rule';
import { FlowRuleChecker } from './flow-rule-checker';

/** The origins that one resource's flow rules name (neither `'default'` nor `'other'`). */
export function namedOrigins(rules: readonly FlowRule[]): Set<string> {
  const names = new Set<string>();
  for (const rule of rules) if (rule.limitOrigin !== 'default' && rule.limitOrigin !== 'other') names.add(rule.limitOrigin);
  return names;
}

/**
 * Compiles one resource's flow rules into checkers, keeping the state of unchanged rules. With
 * a cluster backend, rules with `cluster` set take their decision from it, the local checker
 * being their fallback.
 */
export function compileFlowRules(rules: readonly FlowRule[], ctx: CompileContext): Checker[] {
  const named = namedOrigins(rules);
  const backend = ctx.cluster;
  const keys = backend !== undefined ? new ClusterKeys() : undefined;
  return rules.map((rule) => {
    const controller = ctx.reuse('flow', rule, () => createTrafficController(rule));
    const checker = new FlowRuleChecker(rule, controller, (resource) => ctx.lookupNode(resource), named);
    if (rule.cluster === undefined || backend === undefined) return checker;
    return compileClusterFlowRule(rule, checker, backend, keys!, named, ctx);
  });
}
