/**
 * `@floodgate/core`: Sentinel-grade traffic governance for Node.js. What application code
 * writes: the engine and its calls, the rules, the errors, the method decorators.
 *
 * The other entry points: `@floodgate/core/testing` (`ManualClock`, `ManualProbe`: time and
 * system signals under a test's control), `@floodgate/core/metrics` (what observers read: statistics,
 * breaker states, event payloads, diagnostics channels), `@floodgate/core/http` (what HTTP adapters
 * build on) and `@floodgate/core/cluster` (what a cluster backend implements).
 * @packageDocumentation
 */

// The engine
export {
  Floodgate,
  floodgate,
  type FloodgateOptions,
  type EntryOptions,
  type EnterOptions,
  type RunOptions,
  type RunSyncOptions,
  type LoadOptions,
} from './engine/floodgate';
export { normalizeRuleSet, parseRulesJson, ruleSetJson } from './engine/rule-set-input';
export type { OutcomeHandlers } from './engine/run-outcome';
export { Entry, type EntryAttempt } from './kernel/entry';
export type { Priority, PriorityFactorsOptions } from './kernel/priority';

// Rules (as they are in force, validated and resolved: `@floodgate/core/metrics`)
export type { RuleSet, RuleSetOptions } from './engine/kinds';
export type { RolloutOptions, RuleMode } from './engine/rollout';
export type { FlowRuleOptions } from './flow/flow-rule';
export type { CircuitBreakerRuleOptions } from './circuit-breaker/circuit-breaker-rule';
export type { HotParamRuleOptions } from './hot-param/hot-param-rule';
export type { KeySourceOptions, KeyMatch } from './kernel/key-source';
export type { ApiGroupOptions, ApiGroupPattern } from './api-group/api-group';
export type { SystemRuleOptions } from './system/system-rule';
export type { AuthorityRuleOptions } from './authority/authority';
export type { PushbackRuleOptions } from './pushback/pushback';
export type { AdaptiveThrottlingRuleOptions } from './adaptive-throttling/adaptive-throttling-rule';
export type { RetryBudgetRuleOptions } from './retry-budget/retry-budget-rule';
export { fileRuleSource, FileRuleSource, type FileRuleSourceOptions } from './sources/file-rule-source';

// Errors
export {
  BlockError,
  isBlockError,
  RuleValidationError,
  TimeoutError,
  type BlockErrorOptions,
  type RuleIssue,
} from './kernel/errors';
export { FlowBlockError } from './flow/flow-rule';
export { HotParamBlockError } from './hot-param/hot-param-rule';
export { CircuitOpenError } from './circuit-breaker/circuit-breaker-kind';
export { SystemBlockError } from './system/system-rule';
export { AuthorityBlockError } from './authority/authority';
export { UpstreamPausedError } from './pushback/pushback';
export { AdaptiveThrottlingError } from './adaptive-throttling/adaptive-throttling-rule';
export { RetryBudgetExhaustedError } from './retry-budget/retry-budget-rule';
export { ErrorCodes } from './engine/kinds';

// Events (their payloads, and the diagnostics channels: `@floodgate/core/metrics`)
export type { FloodgateEventMap } from './engine/events';

// Decorators
export {
  RateLimit,
  CircuitBreaker,
  HotParam,
  type RateLimitDecoratorOptions,
  type CircuitBreakerDecoratorOptions,
  type HotParamDecoratorOptions,
} from './decorators/decorators';
export {
  getGuardedMethods,
  type GuardedMethodInfo,
  type MethodGuardOptions,
  type GuardDecorator,
} from './decorators/method-guard';

// Moved in 0.2.0, still here until 0.3.0
export {
  ManualClock,
  ManualProbe,
  DIAGNOSTICS_CHANNELS,
  type Clock,
  type DiagnosticsMessage,
  type CircuitStateChangeEvent,
  type ClusterFallbackEvent,
} from './deprecated';
