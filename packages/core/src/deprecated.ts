/**
 * Names the root exported until 0.2.0 that now live in another entry point, kept here until
 * 0.3.0 so that code importing them from `@floodgate/core` keeps working (with a deprecation
 * notice in editors). Each is the same value or type as in its new entry point.
 */
import type { CircuitStateChangeEvent as BreakerChange } from './circuit-breaker/circuit-breaker-rule';
import {
  DIAGNOSTICS_CHANNELS as CHANNELS,
  type ClusterFallbackEvent as Fallback,
  type FloodgateEventMap,
} from './engine/events';
import type { DiagnosticsMessage as Message } from './engine/floodgate';
import type { Clock as EngineClock } from './kernel/clock';
import { ManualClock as TestClock } from './testing/manual-clock';
import { ManualProbe as TestProbe } from './testing/manual-probe';
import {
  type RuleSetOptions as RuleSetOptionsInRules,
  type RuleSet as RuleSetInRules,
  type RolloutOptions as RolloutOptionsInRules,
  type RuleMode as RuleModeInRules,
  type FlowRuleOptions as FlowRuleOptionsInRules,
  type CircuitBreakerRuleOptions as CircuitBreakerRuleOptionsInRules,
  type HotParamRuleOptions as HotParamRuleOptionsInRules,
  type KeySourceOptions as KeySourceOptionsInRules,
  type KeyMatch as KeyMatchInRules,
  type PriorityFactorsOptions as PriorityFactorsOptionsInRules,
  type ApiGroupOptions as ApiGroupOptionsInRules,
  type ApiGroupPattern as ApiGroupPatternInRules,
  type SystemRuleOptions as SystemRuleOptionsInRules,
  type AuthorityRuleOptions as AuthorityRuleOptionsInRules,
  type PushbackRuleOptions as PushbackRuleOptionsInRules,
  type AdaptiveThrottlingRuleOptions as AdaptiveThrottlingRuleOptionsInRules,
  type RetryBudgetRuleOptions as RetryBudgetRuleOptionsInRules,
  type FileRuleSourceOptions as FileRuleSourceOptionsInRules,
  normalizeRuleSet as normalizeRuleSetInRules,
  parseRulesJson as parseRulesJsonInRules,
  ruleSetJson as ruleSetJsonInRules,
  fileRuleSource as fileRuleSourceInRules,
  FileRuleSource as FileRuleSourceInRules,
} from './rules';

/**
 * The test clock, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualClock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export const ManualClock = TestClock;
/**
 * The test clock, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualClock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type ManualClock = TestClock;

/**
 * The test probe, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualProbe` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export const ManualProbe = TestProbe;
/**
 * The test probe, now in `@floodgate/core/testing`.
 * @deprecated Import `ManualProbe` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type ManualProbe = TestProbe;

/**
 * The engine's clock contract, now in `@floodgate/core/testing`.
 * @deprecated Import `Clock` from `@floodgate/core/testing`; the root stops exporting it in 0.3.0.
 */
export type Clock = EngineClock;

/**
 * The diagnostics channels, now in `@floodgate/core/metrics`.
 * @deprecated Import `DIAGNOSTICS_CHANNELS` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export const DIAGNOSTICS_CHANNELS = CHANNELS;

/**
 * A diagnostics channel's message, now in `@floodgate/core/metrics`.
 * @deprecated Import `DiagnosticsMessage` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type DiagnosticsMessage<K extends keyof FloodgateEventMap = keyof FloodgateEventMap> = Message<K>;

/**
 * The `circuitStateChange` event, now in `@floodgate/core/metrics`.
 * @deprecated Import `CircuitStateChangeEvent` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type CircuitStateChangeEvent = BreakerChange;

/**
 * The `clusterFallback` event, now in `@floodgate/core/metrics`.
 * @deprecated Import `ClusterFallbackEvent` from `@floodgate/core/metrics`; the root stops exporting it in 0.3.0.
 */
export type ClusterFallbackEvent = Fallback;

// Moved to `@floodgate/core/rules` in 0.2.0 (the rules as written and what reads them): the root
// keeps them until 0.3.0.

/**
 * The rule set as written (what `loadRules()` takes), now in `@floodgate/core/rules`.
 * @deprecated Import `RuleSetOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type RuleSetOptions = RuleSetOptionsInRules;

/**
 * The rules in force, by kind (what `getRules()` returns), now in `@floodgate/core/rules`.
 * @deprecated Import `RuleSet` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type RuleSet = RuleSetInRules;

/**
 * The rollout fields every rule takes (`mode`, `enforcePercent`), now in `@floodgate/core/rules`.
 * @deprecated Import `RolloutOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type RolloutOptions = RolloutOptionsInRules;

/**
 * A rule's rollout mode (`'enforce' | 'shadow'`), now in `@floodgate/core/rules`.
 * @deprecated Import `RuleMode` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type RuleMode = RuleModeInRules;

/**
 * A flow rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `FlowRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type FlowRuleOptions = FlowRuleOptionsInRules;

/**
 * A circuit breaker rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `CircuitBreakerRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type CircuitBreakerRuleOptions = CircuitBreakerRuleOptionsInRules;

/**
 * A hotspot rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `HotParamRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type HotParamRuleOptions = HotParamRuleOptionsInRules;

/**
 * A hotspot rule's key source as written, now in `@floodgate/core/rules`.
 * @deprecated Import `KeySourceOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type KeySourceOptions = KeySourceOptionsInRules;

/**
 * A key source's match as written, now in `@floodgate/core/rules`.
 * @deprecated Import `KeyMatch` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type KeyMatch = KeyMatchInRules;

/**
 * A rule's `priorityFactors` as written, now in `@floodgate/core/rules`.
 * @deprecated Import `PriorityFactorsOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type PriorityFactorsOptions = PriorityFactorsOptionsInRules;

/**
 * An API group as written, now in `@floodgate/core/rules`.
 * @deprecated Import `ApiGroupOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type ApiGroupOptions = ApiGroupOptionsInRules;

/**
 * One of an API group's patterns, now in `@floodgate/core/rules`.
 * @deprecated Import `ApiGroupPattern` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type ApiGroupPattern = ApiGroupPatternInRules;

/**
 * A system rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `SystemRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type SystemRuleOptions = SystemRuleOptionsInRules;

/**
 * An authority rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `AuthorityRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type AuthorityRuleOptions = AuthorityRuleOptionsInRules;

/**
 * A pushback rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `PushbackRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type PushbackRuleOptions = PushbackRuleOptionsInRules;

/**
 * An adaptive throttling rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `AdaptiveThrottlingRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type AdaptiveThrottlingRuleOptions = AdaptiveThrottlingRuleOptionsInRules;

/**
 * A retry budget rule as written, now in `@floodgate/core/rules`.
 * @deprecated Import `RetryBudgetRuleOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type RetryBudgetRuleOptions = RetryBudgetRuleOptionsInRules;

/**
 * `fileRuleSource`'s options, now in `@floodgate/core/rules`.
 * @deprecated Import `FileRuleSourceOptions` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type FileRuleSourceOptions = FileRuleSourceOptionsInRules;

/**
 * Validates a rule set as every rule source does, now in `@floodgate/core/rules`.
 * @deprecated Import `normalizeRuleSet` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export const normalizeRuleSet = normalizeRuleSetInRules;

/**
 * Parses a rule set's JSON text, now in `@floodgate/core/rules`.
 * @deprecated Import `parseRulesJson` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export const parseRulesJson = parseRulesJsonInRules;

/**
 * A rule set's JSON text, validated as readers will see it, now in `@floodgate/core/rules`.
 * @deprecated Import `ruleSetJson` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export const ruleSetJson = ruleSetJsonInRules;

/**
 * Rules from a watched file, now in `@floodgate/core/rules`.
 * @deprecated Import `fileRuleSource` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export const fileRuleSource = fileRuleSourceInRules;

/**
 * A rule source reading a watched file, now in `@floodgate/core/rules`.
 * @deprecated Import `FileRuleSource` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export const FileRuleSource = FileRuleSourceInRules;

/**
 * A rule source reading a watched file, now in `@floodgate/core/rules`.
 * @deprecated Import `FileRuleSource` from `@floodgate/core/rules`; the root stops exporting it in 0.3.0.
 */
export type FileRuleSource = FileRuleSourceInRules;
