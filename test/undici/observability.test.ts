import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpstreamPausedError } from '@floodgate/core';
import { fileRuleSource } from '@floodgate/core/rules';
import { dashboard } from '@floodgate/dashboard';
import { instrumentFloodgate } from '@floodgate/opentelemetry';
import { collectMetrics } from '@floodgate/prometheus';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { request, type Dispatcher } from 'undici';
import { firstEvent } from '../dashboard/support/events';
import { Harness } from './harness';
import type { Upstream } from './upstream';

/**
 * Outbound resources are resources like any other: metric exporters, the dashboard and rule
 * sources see them, by the host's name.
 */
describe('outbound resources seen from the outside', () => {
  let h: Harness;
  let upstream: Upstream;
  let dispatcher: Dispatcher;
  beforeEach(async () => {
    h = new Harness();
    upstream = (await h.upstream()).script({ status: 503, headers: { 'retry-after': '30' } });
    ({ dispatcher } = h.agent({ retry: false }));
  });
  afterEach(() => h.close());

  /** One call answered 503 with Retry-After, then one refused locally: a pass and a pushback block. */
  async function pushedBack(): Promise<void> {
    await h.settle(request(`${upstream.origin}/`, { dispatcher }).then((res) => res.body.text()));
    const refused = await h.settle(request(`${upstream.origin}/`, { dispatcher })).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(UpstreamPausedError);
  }

  it('are exported to Prometheus, blocks by kind and rule', async () => {
    const registry = new Registry();
    const stop = collectMetrics(h.fg, { registry });
    try {
      await pushedBack();
      const text = await registry.metrics();
      expect(text).toContain(`floodgate_passes_total{resource="${upstream.host}"} 1`);
      expect(text).toContain(`floodgate_blocks_total{kind="pushback",rule="pushback#0",resource="${upstream.host}"} 1`);
    } finally {
      stop();
    }
  });

  it('are exported through OpenTelemetry', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const stop = instrumentFloodgate(h.fg, { meterProvider: provider });
    try {
      await pushedBack();
      await reader.forceFlush();
      const points = exporter
        .getMetrics()
        .flatMap((m) =>
          m.scopeMetrics.flatMap((s) =>
            s.metrics.flatMap((metric) => metric.dataPoints.map((p) => ({ name: metric.descriptor.name, ...p }))),
          ),
        );
      expect(points).toContainEqual(
        expect.objectContaining({
          attributes: expect.objectContaining({ 'floodgate.resource': upstream.host, 'floodgate.kind': 'pushback' }),
          value: 1,
        }),
      );
    } finally {
      stop();
      await provider.shutdown();
    }
  });

  it('are shown by the dashboard, with their blocks', async () => {
    const dash = dashboard(h.fg);
    const { server, close } = await dash.listen();
    try {
      // A page is open while the calls are made: the dashboard records blocks while it is watched.
      const watching = await firstEvent(server, '/events', 'snapshot');
      await pushedBack();
      const seen = await firstEvent(server, '/events', 'snapshot');
      seen.close();
      expect(seen.data.blocks).toContainEqual(expect.objectContaining({ resource: upstream.host, kind: 'pushback' }));
      watching.close();
      // With no page open, a snapshot samples the resources first (once the server has seen the pages go).
      const sampled = async () => {
        const next = await firstEvent(server, '/events', 'snapshot');
        next.close();
        return next;
      };
      let snapshot = await sampled();
      for (let i = 0; i < 50 && snapshot.data.resources.length === 0; i++) snapshot = await sampled();
      expect(snapshot.data.kinds).toEqual(expect.arrayContaining(['pushback', 'retryBudgets', 'adaptiveThrottling']));
      expect(snapshot.data.resources.map((r: { name: string }) => r.name)).toContain(upstream.host);
      expect(snapshot.data.blocks).toContainEqual(
        expect.objectContaining({ resource: upstream.host, kind: 'pushback', code: 'ERR_UPSTREAM_PAUSED' }),
      );
    } finally {
      await close();
    }
  });

  it('take rules from a rule source, over the ones the options declared', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-outbound-'));
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ pushback: [{ resource: upstream.host, maxPauseMs: 5000 }] }));
    const source = fileRuleSource(h.fg, file);
    try {
      await h.settle(request(`${upstream.origin}/`, { dispatcher }).then((res) => res.body.text()));
      expect(h.fg.describeRules()).toContainEqual(
        expect.objectContaining({ kind: 'pushback', resource: upstream.host, layer: 'declared', inForce: false }),
      );
      // The loaded rule caps the 30 s pause the upstream asked for at 5 s.
      const refused = await h.settle(request(`${upstream.origin}/`, { dispatcher })).catch((e: Error) => e);
      expect(refused).toMatchObject({ code: 'ERR_UPSTREAM_PAUSED', retryAfterMs: 5000 });
    } finally {
      source.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
