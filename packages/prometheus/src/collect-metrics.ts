import type { Floodgate } from '@floodgate/core';
import {
  BREAKER_STATE_VALUES,
  METRIC_DESCRIPTIONS as HELP,
  MetricsReader,
  PRIORITIES,
  type MetricsReaderOptions,
  type MetricsSnapshot,
  type ResourceMetrics,
} from '@floodgate/core/metrics';
import { register as globalRegistry, type Metric, type Registry, type RegistryContentType } from 'prom-client';

/** Options of {@link collectMetrics}. */
export interface PrometheusMetricsOptions extends MetricsReaderOptions {
  /** The registry the metrics are registered in (Prometheus or OpenMetrics). @defaultValue prom-client's global `register` */
  readonly registry?: Registry<RegistryContentType>;
  /** Prepended to every metric name: letters, digits, `_` and `:`, not starting with a digit. @defaultValue 'floodgate_' */
  readonly prefix?: string;
}

/** Defaults of {@link PrometheusMetricsOptions} (the reader's are in `METRICS_READER_DEFAULTS`). */
export const PROMETHEUS_METRICS_DEFAULTS = Object.freeze({
  /** The project's name, as Prometheus naming conventions ask. */
  prefix: 'floodgate_',
} as const);

type MetricType = 'counter' | 'gauge' | 'histogram';
type Labels = Readonly<Record<string, string | number>>;

/** One line of a metric's exposition: its resource label apart, so its text is made once. */
interface Sample {
  /** The `resource` label, if the metric has one. */
  readonly resource?: string;
  /** The other labels. */
  readonly labels: Labels;
  readonly value: number;
  /** `<name>_bucket`, `_sum`, `_count` for a histogram's lines. */
  readonly metricName?: string;
}

/** One metric: its name (after the prefix), type, help, and how its samples come from a snapshot. */
interface MetricDefinition {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  /** How prom-client's cluster aggregation merges workers' values. */
  readonly aggregator: 'sum' | 'max';
  samples(snapshot: MetricsSnapshot, name: string, buckets: readonly Labels[]): Sample[];
}

const NO_LABELS: Labels = Object.freeze({});

/** Every metric, documented in the README's metrics table. */
const DEFINITIONS: readonly MetricDefinition[] = [
  perResource('passes_total', HELP.passes, (r) => r.passed),
  perResource('cancels_total', HELP.cancels, (r) => r.cancelled),
  {
    name: 'blocks_total',
    type: 'counter',
    help: HELP.blocks,
    aggregator: 'sum',
    samples: (s) =>
      s.resources.flatMap((r) =>
        r.blocksByRule.map((b) => ({ resource: r.resource, labels: { kind: b.kind, rule: b.ruleId }, value: b.count })),
      ),
  },
  byPriority('passes_by_priority_total', HELP.priorityPasses, 'passed'),
  byPriority('blocks_by_priority_total', HELP.priorityBlocks, 'blocked'),
  {
    name: 'would_block_total',
    type: 'counter',
    help: HELP.wouldBlocks,
    aggregator: 'sum',
    samples: (s) =>
      s.wouldBlocks.map((w) => ({ resource: w.resource, labels: { kind: w.kind, rule: w.ruleId }, value: w.count })),
  },
  perResource('successes_total', HELP.successes, (r) => r.succeeded),
  perResource('errors_total', HELP.errors, (r) => r.failed),
  perResource('timeouts_total', HELP.timeouts, (r) => r.timedOut),
  {
    name: 'response_time_seconds',
    type: 'histogram',
    help: HELP.responseTime,
    aggregator: 'sum',
    samples: (s, name, buckets) => {
      const out: Sample[] = [];
      const bucket = `${name}_bucket`;
      for (const r of s.resources) {
        const resource = r.resource;
        for (let i = 0; i < buckets.length; i++)
          out.push({ resource, metricName: bucket, labels: buckets[i]!, value: r.rtCumulative[i]! });
        out.push(
          { resource, metricName: `${name}_sum`, labels: NO_LABELS, value: r.rtSumMs / 1000 },
          { resource, metricName: `${name}_count`, labels: NO_LABELS, value: r.rtCumulative[buckets.length - 1]! },
        );
      }
      return out;
    },
  },
  {
    name: 'concurrency',
    type: 'gauge',
    help: HELP.concurrency,
    aggregator: 'sum',
    samples: (s) => s.resources.map((r) => ({ resource: r.resource, labels: NO_LABELS, value: r.concurrency })),
  },
  {
    name: 'circuit_breaker_state',
    type: 'gauge',
    help: HELP.breakerState,
    aggregator: 'max',
    samples: (s) =>
      s.breakers.map((b) => ({
        resource: b.resource,
        labels: { rule: b.ruleId },
        value: BREAKER_STATE_VALUES[b.state],
      })),
  },
  {
    name: 'circuit_breakers',
    type: 'gauge',
    help: HELP.breakers,
    aggregator: 'sum',
    samples: (s) =>
      (Object.keys(BREAKER_STATE_VALUES) as (keyof typeof BREAKER_STATE_VALUES)[]).map((state) => ({
        labels: { state },
        value: s.breakersByState[state],
      })),
  },
  {
    name: 'circuit_breaker_transitions_total',
    type: 'counter',
    help: HELP.transitions,
    aggregator: 'sum',
    samples: (s) =>
      s.transitions.map((t) => ({
        resource: t.resource,
        labels: { rule: t.ruleId, from: t.from, to: t.to },
        value: t.count,
      })),
  },
  {
    name: 'cluster_fallbacks_total',
    type: 'counter',
    help: HELP.fallbacks,
    aggregator: 'sum',
    samples: (s) =>
      s.fallbacks.map((f) => ({
        resource: f.resource,
        labels: { reason: f.reason, decided_by: f.decidedBy },
        value: f.count,
      })),
  },
  {
    name: 'listener_errors_total',
    type: 'counter',
    help: HELP.listenerErrors,
    aggregator: 'sum',
    samples: (s) => [{ labels: NO_LABELS, value: s.listenerErrors }],
  },
];

function perResource(name: string, help: string, value: (r: ResourceMetrics) => number): MetricDefinition {
  return {
    name,
    type: 'counter',
    help,
    aggregator: 'sum',
    samples: (s) => s.resources.map((r) => ({ resource: r.resource, labels: NO_LABELS, value: value(r) })),
  };
}

/** A counter of every resource by priority: three samples a resource, whatever the traffic. */
function byPriority(name: string, help: string, outcome: 'passed' | 'blocked'): MetricDefinition {
  const labels = PRIORITIES.map((priority) => Object.freeze({ priority }));
  return {
    name,
    type: 'counter',
    help,
    aggregator: 'sum',
    samples: (s) =>
      s.resources.flatMap((r) =>
        PRIORITIES.map((p, i) => ({ resource: r.resource, labels: labels[i]!, value: r.byPriority[outcome][p] })),
      ),
  };
}

/** What every metric of one exporter shares: the scrape's snapshot, the buckets' labels, one `{ resource }` object per resource. */
interface Scrape {
  snapshot(): MetricsSnapshot;
  /** `{ le }` of each histogram bucket, `+Inf` last. */
  readonly buckets: readonly Labels[];
  /** The same `{ resource }` object for a resource at every scrape (prom-client caches its text by identity). */
  resourceLabels(resource: string): Labels;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * A prom-client metric whose samples are read from the engine at scrape time. prom-client's
 * own classes cannot serve here: a histogram has no way to take bucket counts that were counted
 * elsewhere (the engine counts them, allocation-free, as calls exit), and counters read from
 * the engine would be reset and rebuilt label by label at each scrape. The registry asks a
 * metric for `name`, `help`, `type`, `aggregator`, `get()` (samples with their labels, also for
 * `getMetricsAsJSON`) and `reset()`; for the text exposition it prefers `getForPromString()`,
 * where the `resource` label goes as `sharedLabels`, a stable object per resource whose text
 * prom-client makes once (a 1,000-resource scrape formats about 20,000 lines).
 */
class EngineMetric {
  /** Written by the registry too: it strips `_total` from counters' names for OpenMetrics. */
  name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly aggregator: 'sum' | 'max';

  constructor(
    prefix: string,
    private readonly definition: MetricDefinition,
    private readonly scrape: Scrape,
  ) {
    this.name = prefix + definition.name;
    this.help = definition.help;
    this.type = definition.type;
    this.aggregator = definition.aggregator;
  }

  /** Samples with every label in `labels`. */
  get(): Promise<ExposedMetric> {
    return this.expose((sample) => ({
      labels: sample.resource === undefined ? sample.labels : { resource: sample.resource, ...sample.labels },
      value: sample.value,
      ...(sample.metricName === undefined ? {} : { metricName: sample.metricName }),
    }));
  }

  /** Samples with the resource label apart (prom-client's text exposition). */
  getForPromString(): Promise<ExposedMetric> {
    return this.expose((sample) => ({
      labels: sample.labels,
      sharedLabels: sample.resource === undefined ? NO_LABELS : this.scrape.resourceLabels(sample.resource),
      value: sample.value,
      metricName: sample.metricName,
    }));
  }

  /** Nothing to reset: the values are the engine's. */
  reset(): void {}

  private expose(shape: (sample: Sample) => object): Promise<ExposedMetric> {
    try {
      const values = this.definition.samples(this.scrape.snapshot(), this.name, this.scrape.buckets).map(shape);
      return Promise.resolve({
        name: this.name,
        help: this.help,
        type: this.type,
        aggregator: this.aggregator,
        values,
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

interface ExposedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly aggregator: string;
  readonly values: readonly object[];
}

/**
 * Registers Floodgate's metrics in a prom-client registry: counters of passes, cancels, blocks
 * (by kind and rule), successes, errors and timeouts; a response-time histogram; concurrency and
 * circuit breaker state gauges; counters of breaker transitions and cluster fallbacks, all per
 * resource. Values are read from the engine when the registry is scraped, once per scrape for
 * every metric together; nothing is added to the entry path. Labels are bounded: resources past
 * `maxResources` fold into `other`, rules are named by position (`flow#0`), hotspot values are
 * never labels. Returns a function that unregisters the metrics and stops counting.
 *
 * @throws TypeError when `floodgate` is not an engine.
 * @throws RuleValidationError listing every bad option.
 * @throws Error when a metric of the same name is already in the registry (a second
 *   `collectMetrics` with the same prefix).
 * @example
 * import { Registry } from 'prom-client';
 * const registry = new Registry();
 * collectMetrics(fg, { registry });
 * app.get('/metrics', async (req, res) => res.type(registry.contentType).send(await registry.metrics()));
 */
export function collectMetrics(floodgate: Floodgate, options: PrometheusMetricsOptions = {}): () => void {
  const issues: { path: string; message: string }[] = [];
  const registry: Registry<RegistryContentType> = options?.registry ?? globalRegistry;
  if (typeof registry?.registerMetric !== 'function' || typeof registry.getSingleMetric !== 'function') {
    issues.push({ path: 'options.registry', message: 'must be a prom-client Registry' });
  }
  const prefix = options?.prefix ?? PROMETHEUS_METRICS_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || (prefix !== '' && !METRIC_NAME.test(prefix))) {
    issues.push({
      path: 'options.prefix',
      message: `must be letters, digits, '_' and ':', not starting with a digit, got ${JSON.stringify(prefix)}`,
    });
  }
  const reader = new MetricsReader(floodgate, options, {
    context: 'Invalid collectMetrics options',
    ownKeys: ['registry', 'prefix'],
    issues,
  });
  let cached: MetricsSnapshot | undefined;
  const resourceLabels = new Map<string, Labels>(); // bounded: resources past the cap are 'other'
  const scrape: Scrape = {
    // The registry asks every metric in one synchronous loop: they share one reading per scrape.
    snapshot: () => {
      if (cached === undefined) {
        cached = reader.read();
        queueMicrotask(() => (cached = undefined));
      }
      return cached;
    },
    buckets: Object.freeze([
      ...reader.rtBucketsMs.map((ms) => Object.freeze({ le: ms / 1000 })),
      Object.freeze({ le: '+Inf' }),
    ]),
    resourceLabels: (resource) => {
      let labels = resourceLabels.get(resource);
      if (labels === undefined) resourceLabels.set(resource, (labels = Object.freeze({ resource })));
      return labels;
    },
  };
  const metrics = DEFINITIONS.map((definition) => new EngineMetric(prefix, definition, scrape));
  const taken = metrics.find((metric) => registry.getSingleMetric(metric.name) !== undefined);
  if (taken !== undefined) {
    reader.close();
    throw new Error(
      `collectMetrics: the registry already has a metric named ${taken.name}; call the function the first collectMetrics returned to remove its metrics, or give another prefix`,
    );
  }
  // Names as registered: an OpenMetrics registry renames counters when it exposes them.
  const names = metrics.map((metric) => metric.name);
  for (const metric of metrics) registry.registerMetric(metric as unknown as Metric);
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    reader.close();
    metrics.forEach((metric, i) => {
      if (registry.getSingleMetric(names[i]!) === (metric as unknown as Metric)) registry.removeSingleMetric(names[i]!);
    });
  };
}
