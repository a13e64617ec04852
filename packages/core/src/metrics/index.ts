/**
 * `@floodgate/core/metrics`: what metric exporters read from an engine (`@floodgate/prometheus`
 * and `@floodgate/opentelemetry` build on it), with labels bounded whatever the traffic. Users
 * of an exporter need only the exporter.
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
} from './metrics-reader';
export type { RuleBlockCount } from '../engine/block-counts';
export { RT_BUCKET_BOUNDS_MS } from '../kernel/statistic-node';
