/**
 * `@floodgate/core/rules`: the rules as code and configuration write them, and what reads them.
 * `RuleSetOptions` (what `loadRules()` and `declareRules()` take) with each kind's `XxxRuleOptions`
 * and the fields they share (`RolloutOptions`, `KeySourceOptions`, `PriorityFactorsOptions`, ...);
 * `RuleSet`, the rules in force by kind (what `getRules()` returns; each kind's rule in force is in
 * `@floodgate/core/metrics`); `normalizeRuleSet`, `parseRulesJson` and `ruleSetJson`, the
 * validation every rule source goes through; and `fileRuleSource`, rules from a watched file.
 * A first program needs none of it: `fg.loadRules({ flow: [...] })` takes a literal.
 * @packageDocumentation
 */

// The rule set, as written and in force
export type { RuleSet, RuleSetOptions } from '../engine/kinds';
export type { RolloutOptions, RuleMode } from '../engine/rollout';

// Each kind's rule as written, and the fields rules share
export type { FlowRuleOptions } from '../flow/flow-rule';
export type { CircuitBreakerRuleOptions } from '../circuit-breaker/circuit-breaker-rule';
export type { HotParamRuleOptions } from '../hot-param/hot-param-rule';
export type { KeySourceOptions, KeyMatch } from '../kernel/key-source';
export type { PriorityFactorsOptions } from '../kernel/priority';
export type { ApiGroupOptions, ApiGroupPattern } from '../api-group/api-group';
export type { SystemRuleOptions } from '../system/system-rule';
export type { AuthorityRuleOptions } from '../authority/authority';
export type { PushbackRuleOptions } from '../pushback/pushback';
export type { AdaptiveThrottlingRuleOptions } from '../adaptive-throttling/adaptive-throttling-rule';
export type { RetryBudgetRuleOptions } from '../retry-budget/retry-budget-rule';

// Reading rules: validation, JSON text, a watched file
export { normalizeRuleSet, parseRulesJson, ruleSetJson } from '../engine/rule-set-input';
export { fileRuleSource, FileRuleSource, type FileRuleSourceOptions } from '../sources/file-rule-source';
