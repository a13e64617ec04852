/**
 * `@floodgate/core/metrics`: what observers read from an engine. `MetricsReader`, what metric
 * exporters build on (`@floodgate/prometheus`, `@floodgate/opentelemetry`), with labels bounded
 * whatever the traffic; and the types of what an engine reports: its statistics (`stats()`,
 * `totals()`, `history()`, `blocksByRule()`), its breakers' states (`circuitState()`), the rules in
 * force (`getRules()`, `describeRules()`), its events' payloads (`on()`) and the
 * `node:diagnostics_channel` channels they are also published on. Users of an exporter need only
 * the exporter.
 * @packageDocumentation
 */
export {
  MetricsReader,
  METRICS_READER_DEFAULTS,
  OTHER_RESOURCES,
  METRIC_DESCRIPTIONS,
  BREAKER_STATE_VALUES,
  type MetricsReaderOptions,
  type MetricsReaderSetup,
  type MetricsSnapshot,
  type ResourceMetrics,
  type BreakerMetrics,
  type TransitionCount,
  type FallbackCount,
  type WouldBlockCount,
} from './metrics-reader';

// Statistics
export type { ResourceStats, WindowStats, ResourceTotals, SecondStats } from '../kernel/statistic-node';
export { RT_BUCKET_BOUNDS_MS } from '../kernel/statistic-node';
export type { RuleBlockCount } from '../engine/block-counts';
export type { PriorityCountsSnapshot } from '../engine/priority-counts';
export { PRIORITIES } from '../kernel/priority';

// Rules in force, and breakers' states
export { RULE_KIND_NAMES, type AnyRule, type RuleKindKey, type RuleKindNames } from '../engine/kinds';
export type { RuleDescription } from '../engine/rule-store';
export type { FlowRule } from '../flow/flow-rule';
export type { PriorityFactors } from '../kernel/priority';
export type {
  CircuitBreakerRule,
  CircuitBreakerStatus,
  CircuitState,
  CircuitStateChangeEvent,
} from '../circuit-breaker/circuit-breaker-rule';
export type { HotParamRule } from '../hot-param/hot-param-rule';
export type { KeySource, KeySourceFrom, KeyMatchStrategy } from '../kernel/key-source';
export type { ApiGroup } from '../api-group/api-group';
export type { SystemRule } from '../system/system-rule';
export type { AuthorityRule } from '../authority/authority';
export type { PushbackRule } from '../pushback/pushback';
export type { AdaptiveThrottlingRule } from '../adaptive-throttling/adaptive-throttling-rule';
export type { RetryBudgetRule, RetryBudgetStatus } from '../retry-budget/retry-budget-rule';

// Events
export {
  DIAGNOSTICS_CHANNELS,
  type PassEvent,
  type BlockEvent,
  type RulesLoadedEvent,
  type RulesRejectedEvent,
  type WarningEvent,
  type ClusterFallbackEvent,
  type ClusterRecoverEvent,
  type WouldBlockEvent,
} from '../engine/events';
export type { RuleRollout } from '../engine/rollout';
export type { DiagnosticsMessage } from '../engine/floodgate';
