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

/** Compiles one resource's flow rules into checkers, keeping the state of unchanged rules. */
export function compileFlowRules(rules: readonly FlowRule[], ctx: CompileContext): FlowRuleChecker[] {
  const named = namedOrigins(rules);
  return rules.map((rule) => {
    const controller = ctx.reuse('flow', rule, () => createTrafficController(rule));
    return new FlowRuleChecker(rule, controller, (resource) => ctx.lookupNode(resource), named);
  });
}
