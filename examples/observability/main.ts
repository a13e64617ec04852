/**
 * Runs the observability example (app.ts) on 127.0.0.1: sends a burst of searches (some get
 * 429) and payments (the breaker opens: 502, then 503), then prints what Prometheus would scrape
 * from `GET /metrics`, what OpenTelemetry collected, and the block events on the requests' spans.
 * In-memory OpenTelemetry exporters stand in for a collector. About a second.
 * Run: `npx tsx --conditions=@floodgate/source examples/observability/main.ts`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Floodgate } from '@floodgate/core';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { createApp } from './app';

/** What a run saw. */
export interface ObservabilityRun {
  /** How many responses had each status. */
  readonly statuses: Readonly<Record<number, number>>;
  /** The `/metrics` lines about blocks and breakers. */
  readonly prometheus: readonly string[];
  /** OpenTelemetry's `floodgate.blocks` data points, as `resource kind rule: count`. */
  readonly openTelemetry: readonly string[];
  /** The `floodgate.block` span events, as `span: rule`. */
  readonly spanEvents: readonly string[];
}

/** Runs the app against a burst of traffic and reports what the metrics and traces say. */
export async function main(fg = new Floodgate()): Promise<ObservabilityRun> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });

  const server = createApp({ floodgate: fg, registry: new Registry(), meterProvider }).listen(0, '127.0.0.1');
  try {
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const statuses: Record<number, number> = {};
    const get = async (path: string): Promise<void> => {
      const { status } = await fetch(base + path);
      statuses[status] = (statuses[status] ?? 0) + 1;
    };
    for (let i = 0; i < 8; i++) await get(`/search?q=jazz-${i}`);
    for (let i = 0; i < 5; i++) await get('/payments');

    const text = await (await fetch(`${base}/metrics`)).text();
    const prometheus = text
      .split('\n')
      .filter((line) => /^floodgate_(blocks_total|circuit_breaker_state)\{/.test(line));
    await reader.forceFlush();
    const openTelemetry = exporter
      .getMetrics()
      .flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics))
      .filter((m) => m.descriptor.name === 'floodgate.blocks')
      .flatMap((m) =>
        m.dataPoints.map(
          (p) =>
            `${String(p.attributes['floodgate.resource'])} ${String(p.attributes['floodgate.kind'])} ${String(p.attributes['floodgate.rule'])}: ${String(p.value)}`,
        ),
      );
    const spanEvents = spans
      .getFinishedSpans()
      .flatMap((span) => span.events.map((event) => `${span.name}: ${String(event.attributes?.['floodgate.rule'])}`));
    return { statuses, prometheus, openTelemetry, spanEvents };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
    trace.disable();
    context.disable();
  }
}

if (require.main === module) {
  void main().then(({ statuses, prometheus, openTelemetry, spanEvents }) => {
    console.log(
      'Responses:',
      Object.entries(statuses)
        .map(([status, n]) => `${n} × ${status}`)
        .join(', '),
    );
    console.log('\nPrometheus (GET /metrics):');
    for (const line of prometheus) console.log(`  ${line}`);
    console.log('\nOpenTelemetry (floodgate.blocks):');
    for (const line of openTelemetry) console.log(`  ${line}`);
    console.log(`\nSpan events: ${spanEvents.length} × floodgate.block, e.g. ${spanEvents[0] ?? '(none)'}`);
  });
}
