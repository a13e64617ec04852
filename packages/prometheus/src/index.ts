/**
 * `@floodgate/prometheus`: Floodgate's metrics in a prom-client registry, read from the engine at
 * scrape time. One call: `collectMetrics(fg, { registry })`.
 * @packageDocumentation
 */
export { collectMetrics, PROMETHEUS_METRICS_DEFAULTS, type PrometheusMetricsOptions } from './collect-metrics';
