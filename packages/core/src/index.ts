/**
 * `@floodgate/core`: Sentinel-grade traffic governance for Node.js. What a first program imports:
 * the engine and its calls, the errors, the method decorators.
 *
 * The other entry points: `@floodgate/core/rules` (the rules as written, `RuleSetOptions` and each
 * kind's `XxxRuleOptions`, the rules in force by kind, and what reads them: `normalizeRuleSet`,
 * `parseRulesJson`, `ruleSetJson`, `fileRuleSource`), `@floodgate/core/testing` (`ManualClock`,
 * `ManualProbe`: time and system signals under a test's control), `@floodgate/core/metrics` (what
 * observers read: statistics, breaker states, the rules in force, event payloads, diagnostics
 * channels), `@floodgate/core/http` (what HTTP adapters build on), `@floodgate/core/cluster` (what a
 * cluster backend implements) and `@floodgate/core/sentinel` (Sentinel's rule format).
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
export type { OutcomeHandlers } from './engine/run-outcome';
export { Entry, type EntryAttempt } from './kernel/entry';
export type { Priority } from './kernel/priority';
export { tickingClock, type TickingClock } from './kernel/ticking-clock';

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

// Moved in 0.2.0, still here until 0.3.0 (marked deprecated; `npm run api` counts them apart)
export {
  // to @floodgate/core/testing and @floodgate/core/metrics
  ManualClock,
  ManualProbe,
  DIAGNOSTICS_CHANNELS,
  type Clock,
  type DiagnosticsMessage,
  type CircuitStateChangeEvent,
  type ClusterFallbackEvent,
  // to @floodgate/core/rules
  normalizeRuleSet,
  parseRulesJson,
  ruleSetJson,
  fileRuleSource,
  FileRuleSource,
  type FileRuleSourceOptions,
  type RuleSet,
  type RuleSetOptions,
  type RolloutOptions,
  type RuleMode,
  type FlowRuleOptions,
  type CircuitBreakerRuleOptions,
  type HotParamRuleOptions,
  type KeySourceOptions,
  type KeyMatch,
  type PriorityFactorsOptions,
  type ApiGroupOptions,
  type ApiGroupPattern,
  type SystemRuleOptions,
  type AuthorityRuleOptions,
  type PushbackRuleOptions,
  type AdaptiveThrottlingRuleOptions,
  type RetryBudgetRuleOptions,
} from './deprecated';
