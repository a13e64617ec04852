import type { Floodgate } from '@floodgate/core';
import {
  BREAKER_STATE_VALUES,
  METRIC_DESCRIPTIONS as D,
  MetricsReader,
  PRIORITIES,
  type BlockEvent,
  type MetricsReaderOptions,
} from '@floodgate/core/metrics';
import {
  metrics,
  trace,
  type Attributes,
  type BatchObservableCallback,
  type MeterProvider,
  type Observable,
} from '@opentelemetry/api';

/** Options of {@link instrumentFloodgate}. */
export interface OpenTelemetryOptions extends MetricsReaderOptions {
  /** Where the instruments are made (a meter named `@floodgate/opentelemetry`). @defaultValue the global meter provider */
  readonly meterProvider?: MeterProvider;
  /** Whether a blocked call adds a `floodgate.block` event to the active span, when one is recording. @defaultValue true */
  readonly spanEvents?: boolean;
}

/** Defaults of {@link OpenTelemetryOptions} (the reader's are in `METRICS_READER_DEFAULTS`). */
export const OPENTELEMETRY_DEFAULTS = Object.freeze({
  /** Blocks show in traces, where the request that was refused is. */
  spanEvents: true,
} as const);

/** The meter's name (the instrumentation scope). */
export const METER_NAME = '@floodgate/opentelemetry';

/** The name of the span event a blocked call adds. */
export const BLOCK_SPAN_EVENT = 'floodgate.block';

/**
 * Reports Floodgate through the OpenTelemetry API: the instruments `@floodgate/prometheus`
 * exports (passes, cancels, blocks by kind and rule, successes, errors, timeouts, response times,
 * concurrency, breaker states and transitions, cluster fallbacks), read from the engine at each
 * collection through one batch callback, so nothing is added to the entry path; and, when a call
 * is blocked while a span is recording, a `floodgate.block` event on that span with the
 * resource, kind, rule and code. Attributes are the Prometheus labels under `floodgate.`
 * (`floodgate.resource`, `floodgate.kind`, `floodgate.rule`, ...), equally bounded.
 *
 * OpenTelemetry's API has no observable histogram, and recording each call would put work on the
 * entry path; the response-time distribution is therefore reported as the engine counts it:
 * `floodgate.response_time.bucket` (calls of at most `floodgate.le` seconds, cumulative),
 * `floodgate.response_time.sum` and `floodgate.response_time.count`.
 *
 * Returns a function that removes the instruments' callback and the block listener.
 *
 * @throws TypeError when `floodgate` is not an engine.
 * @throws RuleValidationError listing every bad option.
 * @example
 * const provider = new MeterProvider({ readers: [reader] });
 * const stop = instrumentFloodgate(fg, { meterProvider: provider });
 */
export function instrumentFloodgate(floodgate: Floodgate, options: OpenTelemetryOptions = {}): () => void {
  const issues: { path: string; message: string }[] = [];
  const provider = options?.meterProvider ?? metrics.getMeterProvider();
  if (typeof provider?.getMeter !== 'function')
    issues.push({ path: 'options.meterProvider', message: 'must be an OpenTelemetry MeterProvider' });
  const spanEvents = options?.spanEvents ?? OPENTELEMETRY_DEFAULTS.spanEvents;
  if (typeof spanEvents !== 'boolean')
    issues.push({ path: 'options.spanEvents', message: `must be true or false, got ${JSON.stringify(spanEvents)}` });
  const reader = new MetricsReader(floodgate, options, {
    context: 'Invalid instrumentFloodgate options',
    ownKeys: ['meterProvider', 'spanEvents'],
    issues,
  });

  const meter = provider.getMeter(METER_NAME);
  const calls = (name: string, description: string) =>
    meter.createObservableCounter(name, { description, unit: '{call}' });
  const passes = calls('floodgate.passes', D.passes);
  const cancels = calls('floodgate.cancels', D.cancels);
  const blocks = calls('floodgate.blocks', D.blocks);
  const passesByPriority = calls('floodgate.passes.by_priority', D.priorityPasses);
  const blocksByPriority = calls('floodgate.blocks.by_priority', D.priorityBlocks);
  const successes = calls('floodgate.successes', D.successes);
  const errors = calls('floodgate.errors', D.errors);
  const timeouts = calls('floodgate.timeouts', D.timeouts);
  const rtBucket = calls(
    'floodgate.response_time.bucket',
    'Exited calls whose response time was at most floodgate.le seconds (cumulative).',
  );
  const rtCount = calls('floodgate.response_time.count', 'Exited calls.');
  const rtSum = meter.createObservableCounter('floodgate.response_time.sum', {
    description: 'Sum of the response times of exited calls.',
    unit: 's',
  });
  const concurrency = meter.createObservableUpDownCounter('floodgate.concurrency', {
    description: D.concurrency,
    unit: '{call}',
  });
  const breakerState = meter.createObservableGauge('floodgate.circuit_breaker.state', { description: D.breakerState });
  const breakers = meter.createObservableUpDownCounter('floodgate.circuit_breakers', {
    description: D.breakers,
    unit: '{breaker}',
  });
  const transitions = meter.createObservableCounter('floodgate.circuit_breaker.transitions', {
    description: D.transitions,
    unit: '{transition}',
  });
  const fallbacks = calls('floodgate.cluster.fallbacks', D.fallbacks);
  const wouldBlocks = calls('floodgate.would_blocks', D.wouldBlocks);
  const listenerErrors = meter.createObservableCounter('floodgate.listener_errors', {
    description: D.listenerErrors,
    unit: '{error}',
  });
  const observables: Observable[] = [
    passes,
    cancels,
    blocks,
    passesByPriority,
    blocksByPriority,
    successes,
    errors,
    timeouts,
    rtBucket,
    rtCount,
    rtSum,
    concurrency,
    breakerState,
    breakers,
    transitions,
    fallbacks,
    wouldBlocks,
    listenerErrors,
  ];
  const les = reader.rtBucketsMs.map((ms) => String(ms / 1000));

  const collect: BatchObservableCallback = (result) => {
    const snapshot = reader.read();
    for (const r of snapshot.resources) {
      const resource: Attributes = { 'floodgate.resource': r.resource };
      result.observe(passes, r.passed, resource);
      result.observe(cancels, r.cancelled, resource);
      for (const b of r.blocksByRule)
        result.observe(blocks, b.count, {
          'floodgate.resource': r.resource,
          'floodgate.kind': b.kind,
          'floodgate.rule': b.ruleId,
        });
      for (const priority of PRIORITIES) {
        const attributes = { 'floodgate.resource': r.resource, 'floodgate.priority': priority };
        result.observe(passesByPriority, r.byPriority.passed[priority], attributes);
        result.observe(blocksByPriority, r.byPriority.blocked[priority], attributes);
      }
      result.observe(successes, r.succeeded, resource);
      result.observe(errors, r.failed, resource);
      result.observe(timeouts, r.timedOut, resource);
      const count = r.rtCumulative[r.rtCumulative.length - 1]!;
      les.forEach((le, i) =>
        result.observe(rtBucket, r.rtCumulative[i]!, { 'floodgate.resource': r.resource, 'floodgate.le': le }),
      );
      result.observe(rtBucket, count, { 'floodgate.resource': r.resource, 'floodgate.le': '+Inf' });
      result.observe(rtCount, count, resource);
      result.observe(rtSum, r.rtSumMs / 1000, resource);
      result.observe(concurrency, r.concurrency, resource);
    }
    for (const b of snapshot.breakers)
      result.observe(breakerState, BREAKER_STATE_VALUES[b.state], {
        'floodgate.resource': b.resource,
        'floodgate.rule': b.ruleId,
      });
    for (const state of Object.keys(BREAKER_STATE_VALUES) as (keyof typeof BREAKER_STATE_VALUES)[])
      result.observe(breakers, snapshot.breakersByState[state], { 'floodgate.state': state });
    for (const t of snapshot.transitions) {
      result.observe(transitions, t.count, {
        'floodgate.resource': t.resource,
        'floodgate.rule': t.ruleId,
        'floodgate.from': t.from,
        'floodgate.to': t.to,
      });
    }
    for (const f of snapshot.fallbacks) {
      result.observe(fallbacks, f.count, {
        'floodgate.resource': f.resource,
        'floodgate.reason': f.reason,
        'floodgate.decided_by': f.decidedBy,
      });
    }
    for (const w of snapshot.wouldBlocks) {
      result.observe(wouldBlocks, w.count, {
        'floodgate.resource': w.resource,
        'floodgate.kind': w.kind,
        'floodgate.rule': w.ruleId,
      });
    }
    result.observe(listenerErrors, snapshot.listenerErrors);
  };
  meter.addBatchObservableCallback(collect, observables);
  const stopSpanEvents = spanEvents ? floodgate.on('block', addBlockEvent) : undefined;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    meter.removeBatchObservableCallback(collect, observables);
    stopSpanEvents?.();
    reader.close();
  };
}

/**
 * Adds a `floodgate.block` event to the active span, if one is recording. The `block` event is
 * emitted synchronously by the call that was refused, so the active span is the caller's.
 */
function addBlockEvent(event: BlockEvent): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  const { error } = event;
  const attributes: Attributes = {
    'floodgate.resource': event.resource,
    'floodgate.kind': error.kind,
    'floodgate.rule': event.ruleId,
    'floodgate.code': error.code,
    'floodgate.priority': event.priority,
  };
  if (error.retryAfterMs !== undefined) attributes['floodgate.retry_after_ms'] = error.retryAfterMs;
  span.addEvent(BLOCK_SPAN_EVENT, attributes);
}
