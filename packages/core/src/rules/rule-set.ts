import type { AuthorityRule, AuthorityRuleOptions } from '../authority/authority-rule';
import type { CircuitBreakerRule, CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
import type { FlowRule, FlowRuleOptions } from '../flow/flow-rule';
import type { HotParamRule, HotParamRuleOptions } from '../hot-param/hot-param-rule';

/** Rules as users write them, by kind. Each kind given replaces that kind on load. */
export interface RuleSetOptions {
  readonly authority?: readonly AuthorityRuleOptions[];
  readonly hotParams?: readonly HotParamRuleOptions[];
  readonly flow?: readonly FlowRuleOptions[];
  readonly circuitBreakers?: readonly CircuitBreakerRuleOptions[];
}

/** Rules in force, by kind: validated, defaults resolved. */
export interface RuleSet {
  readonly authority: readonly AuthorityRule[];
  readonly hotParams: readonly HotParamRule[];
  readonly flow: readonly FlowRule[];
  readonly circuitBreakers: readonly CircuitBreakerRule[];
}

/** A kind of rule: a key of {@link RuleSet}. */
export type RuleKind = keyof RuleSet;

/** The rule kinds, in the order their checks run. */
export const RULE_KINDS: readonly RuleKind[] = Object.freeze(['authority', 'hotParams', 'flow', 'circuitBreakers'] as const);

/** A rule of any kind, in force. */
export type AnyRule = RuleSet[RuleKind][number];
