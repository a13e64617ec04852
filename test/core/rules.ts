import { normalizeRuleSet, type RuleSet } from '@floodgate/core/rules';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import type { RuleKindKey } from '@floodgate/core/metrics';
import type { CompileContext } from '../../packages/core/src/kernel/rule-kind';
import { StatisticNode } from '../../packages/core/src/kernel/statistic-node';

/** The rules of one kind, validated and with defaults resolved (throws `RuleValidationError`). */
export function normalizeRules<K extends RuleKindKey>(kind: K, rules: readonly unknown[]): RuleSet[K] {
  return normalizeRuleSet({ [kind]: rules })[kind] as RuleSet[K];
}

/** A compile context outside any engine: no events, no other resources, a fresh state for every rule. */
export function compileContext(resource = 'r'): CompileContext {
  return {
    resource,
    clock: new ManualClock(),
    random: Math.random,
    events: { has: () => false, emit: () => undefined },
    // What system rules' services hook makes of an engine; other kinds ignore it.
    services: { inbound: new StatisticNode(), probe: new ManualProbe() },
    lookupNode: () => undefined,
    reuse: (_rule, make) => make(),
  };
}
