export { monotonicClock, type Clock } from './clock/clock';
export { ManualClock } from './clock/manual-clock';

export { Floodgate, type FloodgateOptions, type EntryOptions, type EnterOptions, type RunOptions, type RunSyncOptions } from './engine/floodgate';
export { floodgate } from './engine/default-floodgate';
export { FLOODGATE_DEFAULTS } from './engine/floodgate-defaults';
export { Entry } from './engine/entry';
export type { OutcomeHandlers, ErrorMatcher } from './engine/run-outcome';
export type {
  FloodgateEventMap,
  FloodgateListener,
  PassEvent,
  BlockEvent,
  RulesLoadedEvent,
  WarningEvent,
  ClusterFallbackEvent,
  ClusterRecoverEvent,
  RulesRejectedEvent,
} from './engine/events';

export type { RuleSet, RuleSetOptions, RuleKind, AnyRule } from './rules/rule-set';
export { RULE_KINDS } from './rules/rule-set';
export { normalizeRuleSet, normalizeRuleList } from './rules/normalize-rule-set';

export type { FlowRule, FlowRuleOptions, FlowMetric, FlowBehavior, FlowStrategy } from './flow/flow-rule';
export { FLOW_RULE_DEFAULTS } from './flow/flow-rule-defaults';
export type {
  CircuitBreakerRule,
  CircuitBreakerRuleOptions,
  CircuitBreakerStrategy,
  CircuitState,
  CircuitBreakerStatus,
  CircuitStateChangeEvent,
} from './circuit-breaker/circuit-breaker-rule';
export { CIRCUIT_BREAKER_RULE_DEFAULTS } from './circuit-breaker/circuit-breaker-rule-defaults';
export type { HotParamRule, HotParamRuleOptions, HotParamMetric, HotParamBehavior } from './hot-param/hot-param-rule';
export { HOT_PARAM_RULE_DEFAULTS } from './hot-param/hot-param-rule-defaults';
export type { AuthorityRule, AuthorityRuleOptions, AuthorityStrategy } from './authority/authority-rule';
export type { ClusterRuleOptions, ClusterRuleConfig, ClusterThresholdType } from './cluster/cluster-rule-options';
export type {
  ClusterBackend,
  ClusterLimiter,
  ClusterLimiterSpec,
  ClusterWindowSpec,
  ClusterPaceSpec,
  ClusterTokenBucketSpec,
  ClusterDecision,
  ClusterPass,
  ClusterWait,
  ClusterBlock,
  ClusterUnavailable,
  ClusterUnavailableReason,
} from './cluster/cluster-backend';
export { CLUSTER_RULE_DEFAULTS } from './cluster/normalize-cluster-options';

export type { ResourceStats, WindowStats } from './stat/statistic-node';

export { BlockError, isBlockError, type BlockErrorOptions } from './errors/block-error';
export { FlowBlockError } from './errors/flow-block-error';
export { HotParamBlockError } from './errors/hot-param-block-error';
export { CircuitOpenError } from './errors/circuit-open-error';
export { SystemBlockError } from './errors/system-block-error';
export { AuthorityBlockError } from './errors/authority-block-error';
export { RuleValidationError, type RuleIssue } from './errors/rule-validation-error';
export { ErrorCodes, type ErrorCode } from './errors/error-codes';

export { RateLimit, type RateLimitDecoratorOptions } from './decorators/rate-limit';
export { CircuitBreaker, type CircuitBreakerDecoratorOptions } from './decorators/circuit-breaker';
export { HotParam, type HotParamDecoratorOptions, type HotParamByIndexOptions, type HotParamByValueOptions } from './decorators/hot-param';
export type { MethodGuardOptions, GuardHandler } from './decorators/method-guard-options';
export type { GuardDecorator } from './decorators/guard-decorator';
export type { GuardedRules } from './decorators/method-guard';
export { getGuardedMethods, type GuardedMethodInfo } from './decorators/get-guarded-methods';
export { DECORATOR_METADATA_KEYS } from './decorators/decorator-metadata-keys';
export { DECORATOR_DEFAULTS } from './decorators/decorator-defaults';

export * from './http/index';
