import type { BlockError } from '../kernel/errors';
import type { RuleKind } from '../kernel/rule-kind';
import { kindOfCode, type AnyRule } from './kinds';
import { stateIdentity } from './rollout';

/** Blocks by one rule of a resource, from `Floodgate.blocksByRule()`. */
export interface RuleBlockCount {
  /**
   * The kind of rule that refused the calls, by its name (`RuleKindNames.name`), as block errors
   * give it: `'flow'`, `'hotParam'`, `'circuitBreaker'`, `'system'`, `'authority'`, ...
   */
  readonly kind: string;
  /**
   * The rule: `<kind>#<n>`, the n-th rule (from 0) of its kind on the resource in `getRules()`
   * order (`'flow#0'`).
   */
  readonly ruleId: string;
  /** Blocked calls, in `acquireCount` units (1 per call by default). Only grows. */
  readonly count: number;
}

/** What the rules in force of a kind are, on a resource (`''` for inbound kinds). */
export type RulesOf = (kind: RuleKind, resource: string) => readonly AnyRule[];

/**
 * Names the rule that refused a call without naming anything the call carried: `<kind>#<n>`,
 * the n-th rule (from 0) of its kind in force on the resource (for inbound kinds such as system
 * rules: among every rule of the kind), in `getRules()` order, so `'circuitBreaker#1'` is the
 * resource's second breaker. A rule no longer in force when its block is counted (its rules were
 * replaced while the call waited for a shared store) is `<kind>#retired`.
 *
 * Bounded by the rules, never by the traffic: metric labels and span attributes use it.
 */
export function ruleIdOf(error: BlockError, rulesOf: RulesOf): string {
  const kind = kindOfCode(error.code);
  if (kind !== undefined) {
    const rules = rulesOf(kind, kind.scope === 'inbound' ? '' : error.resource);
    let index = rules.indexOf(error.rule as AnyRule);
    if (index < 0) {
      // A checker kept across a reload of an identical rule holds the rule object it was built
      // with; the store holds the one loaded since.
      // (It may have moved between shadow and enforced since: rollout fields aside.)
      const json = stateIdentity(error.rule as object);
      index = rules.findIndex((rule) => stateIdentity(rule) === json);
    }
    if (index >= 0) return `${kind.name}#${index}`;
  }
  return `${error.kind}#retired`;
}

/** One rule's count. */
export interface Slot {
  readonly kind: string;
  readonly ruleId: string;
  count: number;
}

/**
 * The blocks of one resource, counted by rule, for metric exporters. Counting allocates nothing
 * once a rule is known: the rule that refused is found by identity (the engine compares it with
 * {@link RuleBlockCounts.lastRule} and bumps that slot in place, as under attack; else one map
 * lookup here), and its id is worked out only the first time a rule object refuses after a
 * compilation. Counts are kept by id, so they survive recompilations: a reload of unchanged rules
 * keeps counting under the same ids.
 */
export class RuleBlockCounts {
  private readonly byId = new Map<string, Slot>();
  /** The slot of each rule object seen since the last compilation. */
  private readonly byRule = new Map<unknown, Slot>();
  /**
   * The rule that refused last, and its slot: the engine bumps `lastSlot.count` in place when
   * the same rule refuses again (the block path's common case, measured cheaper than a call).
   */
  lastRule: unknown = undefined;
  lastSlot: Slot | undefined;

  /** Counts `count` blocks by the rule of `error`, a rule other than the last one; returns the rule's id. */
  add(error: BlockError, count: number, rulesOf: RulesOf): string {
    const rule = error.rule;
    let slot = this.byRule.get(rule);
    if (slot === undefined) {
      const ruleId = ruleIdOf(error, rulesOf);
      slot = this.byId.get(ruleId);
      if (slot === undefined) this.byId.set(ruleId, (slot = { kind: error.kind, ruleId, count: 0 }));
      this.byRule.set(rule, slot);
    }
    this.lastRule = rule;
    this.lastSlot = slot;
    slot.count += count;
    return slot.ruleId;
  }

  /** The resource's rules were compiled again: rule positions may have changed. */
  forgetRules(): void {
    this.byRule.clear();
    this.lastRule = undefined;
    this.lastSlot = undefined;
  }

  /** Every rule's count, in the order rules first refused. */
  read(): RuleBlockCount[] {
    const out: RuleBlockCount[] = [];
    for (const slot of this.byId.values()) out.push({ kind: slot.kind, ruleId: slot.ruleId, count: slot.count });
    return out;
  }
}
