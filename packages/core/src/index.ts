/**
 * `@floodgate/core`: Sentinel-grade traffic governance for Node.js. The engine, the rule types,
 * the errors, the method decorators and the events; `ManualClock` to test guarded code.
 * Adapters' interface: `@floodgate/core/http`; cluster backends' interface:
 * `@floodgate/core/cluster`.
 * @packageDocumentation
 */

// The engine
export {
  Floodgate,
  floodgate,
  FLOODGATE_DEFAULTS,
  type FloodgateOptions,
  type EntryOptions,
  type EnterOptions,
  type RunOptions,
  type RunSyncOptions,
  type LoadOptions,
  type DiagnosticsMessage,
} from './engine/floodgate';
export { normalizeRuleSet, parseRulesJson, ruleSetJson, RESERVED_RULE_KEYS } from './engine/rule-set-input';
export { Entry } from './kernel/entry';
export { monotonicClock, type Clock } from './kernel/clock';
export { ManualClock } from './kernel/manual-clock';
export {
  processProbe,
  ProcessProbe,
  PROCESS_PROBE_DEFAULTS,
  type SystemProbe,
  type SystemSignals,
  type ProcessProbeOptions,
} from './kernel/system-probe';
export { ManualProbe } from './kernel/manual-probe';
export type { OutcomeHandlers, ErrorMatcher } from './engine/run-outcome';
export type { ResourceStats, WindowStats, ResourceTotals, SecondStats } from './kernel/statistic-node';
export type { RuleBlockCount } from './engine/block-counts';
export { RT_BUCKET_BOUNDS_MS } from './kernel/statistic-node';

// Rules
export type { RuleSet, RuleSetOptions, RuleKindKey, AnyRule } from './engine/kinds';
export type { RuleDescription, RuleLayer } from './engine/rule-store';
export type { FlowRule, FlowRuleOptions, FlowMetric, FlowBehavior, FlowStrategy } from './flow/flow-rule';
export type {
  CircuitBreakerRule,
  CircuitBreakerRuleOptions,
  CircuitBreakerStrategy,
  CircuitState,
  CircuitBreakerStatus,
} from './circuit-breaker/circuit-breaker-rule';
export type { HotParamRule, HotParamRuleOptions, HotParamMetric, HotParamBehavior } from './hot-param/hot-param-rule';
export type { AuthorityRule, AuthorityRuleOptions, AuthorityStrategy } from './authority/authority';
export {
  SYSTEM_RULE_DEFAULTS,
  type SystemRule,
  type SystemRuleOptions,
  type SystemLimit,
  type SystemBlockErrorOptions,
} from './system/system-rule';
export { MAX_DURATION_MS, MAX_RESOURCE_NAME_LENGTH } from './kernel/rule-reader';

// Rule sources
export {
  fileRuleSource,
  FileRuleSource,
  FILE_RULE_SOURCE_DEFAULTS,
  type FileRuleSourceOptions,
} from './sources/file-rule-source';

// Errors
export {
  BlockError,
  isBlockError,
  RuleValidationError,
  TimeoutError,
  type RuleIssue,
  type BlockErrorOptions,
  type Refusal,
  type QuotaPolicy,
} from './kernel/errors';
export { FlowBlockError } from './flow/flow-rule';
export { HotParamBlockError } from './hot-param/hot-param-rule';
export { CircuitOpenError } from './circuit-breaker/circuit-breaker-kind';
export { SystemBlockError } from './system/system-rule';
export { AuthorityBlockError } from './authority/authority';
export { ErrorCodes, type ErrorCode } from './engine/kinds';

// Events
export type {
  FloodgateEventMap,
  FloodgateListener,
  PassEvent,
  BlockEvent,
  RulesLoadedEvent,
  RulesRejectedEvent,
  WarningEvent,
  ClusterFallbackEvent,
  ClusterRecoverEvent,
} from './engine/events';
export type { CircuitStateChangeEvent } from './circuit-breaker/circuit-breaker-rule';
export { DIAGNOSTICS_CHANNELS } from './engine/events';

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
  type GuardedRules,
  type MethodGuardOptions,
  type GuardHandler,
  type GuardDecorator,
} from './decorators/method-guard';
export { DECORATOR_METADATA_KEYS } from './decorators/metadata';
