import { Entry, Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import { collectMetrics } from '@floodgate/prometheus';
import { redisCluster } from '@floodgate/redis';
import Redis from 'ioredis';
import { Registry, register as globalRegistry, Counter, type OpenMetricsContentType } from 'prom-client';
import { startRedisServer } from '../support/test-services';
import { parseExposition, valueOf, type Sample } from './support/exposition';

const engine = (): { fg: Floodgate; clock: ManualClock } => {
  const clock = new ManualClock();
  return { fg: new Floodgate({ clock }), clock };
};

const scrape = async (registry: Registry): Promise<Sample[]> => parseExposition(await registry.metrics());

describe('collectMetrics', () => {
  let stops: (() => void)[] = [];
  const collect = (fg: Floodgate, options: Parameters<typeof collectMetrics>[1] = {}): Registry => {
    const registry = new Registry();
    stops.push(collectMetrics(fg, { ...options, registry }));
    return registry;
  };
  afterEach(() => {
    for (const stop of stops) stop();
    stops = [];
  });

  it('exposes passes, blocks by kind and rule, successes, errors, timeouts, concurrency and breaker states per resource', async () => {
    const { fg, clock } = engine();
    fg.loadRules({
      flow: [{ resource: 'GET /search', threshold: 2 }],
      circuitBreakers: [
        { resource: 'GET /feed', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 60_000 },
      ],
    });
    const registry = collect(fg);
    for (let i = 0; i < 5; i++) {
      const result = fg.tryEntry('GET /search');
      if (result instanceof Entry) result.exit();
    }
    const held = fg.entry('GET /search', { acquireCount: 0 });
    const feed = fg.entry('GET /feed');
    await clock.advance(30);
    feed.traceError(new Error('upstream down'));
    feed.exit();
    fg.tryEntry('GET /feed');
    const samples = await scrape(registry);
    expect(valueOf(samples, 'floodgate_passes_total', { resource: 'GET /search' })).toBe(2);
    expect(valueOf(samples, 'floodgate_blocks_total', { resource: 'GET /search', kind: 'flow', rule: 'flow#0' })).toBe(
      3,
    );
    expect(
      valueOf(samples, 'floodgate_blocks_total', {
        resource: 'GET /feed',
        kind: 'circuitBreaker',
        rule: 'circuitBreaker#0',
      }),
    ).toBe(1);
    expect(valueOf(samples, 'floodgate_successes_total', { resource: 'GET /search' })).toBe(2);
    expect(valueOf(samples, 'floodgate_errors_total', { resource: 'GET /feed' })).toBe(1);
    expect(valueOf(samples, 'floodgate_timeouts_total', { resource: 'GET /feed' })).toBe(0);
    expect(valueOf(samples, 'floodgate_concurrency', { resource: 'GET /search' })).toBe(1);
    expect(
      valueOf(samples, 'floodgate_circuit_breaker_state', { resource: 'GET /feed', rule: 'circuitBreaker#0' }),
    ).toBe(1);
    expect(valueOf(samples, 'floodgate_circuit_breakers', { state: 'open' })).toBe(1);
    expect(
      valueOf(samples, 'floodgate_circuit_breaker_transitions_total', {
        resource: 'GET /feed',
        from: 'closed',
        to: 'open',
      }),
    ).toBe(1);
    expect(valueOf(samples, 'floodgate_listener_errors_total')).toBe(0);
    held.exit();
  });

  it('exposes a response-time histogram in seconds, from the engine buckets', async () => {
    const { fg, clock } = engine();
    const registry = collect(fg, { rtBucketsMs: [10, 100] });
    for (const ms of [4, 40, 400]) {
      const entry = fg.entry('r');
      await clock.advance(ms);
      entry.exit();
    }
    const lines = (await registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith('floodgate_response_time_seconds'));
    expect(lines).toEqual([
      'floodgate_response_time_seconds_bucket{le="0.01",resource="r"} 1',
      'floodgate_response_time_seconds_bucket{le="0.1",resource="r"} 2',
      'floodgate_response_time_seconds_bucket{le="+Inf",resource="r"} 3',
      'floodgate_response_time_seconds_sum{resource="r"} 0.444',
      'floodgate_response_time_seconds_count{resource="r"} 3',
    ]);
    expect(await registry.metrics()).toContain('# TYPE floodgate_response_time_seconds histogram');
  });

  it('counts the calls a shadow rule or a share-enforced rule let through, by resource, kind and rule', async () => {
    const { fg } = engine();
    const registry = collect(fg);
    fg.loadRules({
      flow: [{ resource: 'r', threshold: 1, mode: 'shadow' }],
      hotParams: [{ resource: 'r', paramIndex: 0, threshold: 0, enforcePercent: 0 }],
    });
    for (let i = 0; i < 3; i++) fg.entry('r', { args: ['u'] }).exit();
    const samples = await scrape(registry);
    expect(valueOf(samples, 'floodgate_would_block_total', { resource: 'r', kind: 'flow', rule: 'flow#0' })).toBe(2);
    expect(
      valueOf(samples, 'floodgate_would_block_total', { resource: 'r', kind: 'hotParam', rule: 'hotParam#0' }),
    ).toBe(3);
    expect(samples.filter((s) => s.name === 'floodgate_blocks_total')).toEqual([]);
  });

  it('counts passes and blocks by priority, three series a resource, whatever the priorities of its calls', async () => {
    const { fg } = engine();
    fg.loadFlowRules([
      { resource: 'search', metric: 'concurrency', threshold: 4, partitions: { critical: 0.5, sheddable: 0.5 } },
    ]);
    const registry = collect(fg);
    fg.entry('search', { priority: 'critical' });
    for (let i = 0; i < 5; i++) fg.tryEntry('search', { priority: 'sheddable' });
    fg.entry('search', { priority: 'critical' });
    const samples = await scrape(registry);
    const of = (name: string): Record<string, number> =>
      Object.fromEntries(
        samples
          .filter((s) => s.name === name && s.labels.resource === 'search')
          .map((s) => [s.labels.priority, s.value]),
      );
    expect(of('floodgate_passes_by_priority_total')).toEqual({ critical: 2, default: 0, sheddable: 2 });
    expect(of('floodgate_blocks_by_priority_total')).toEqual({ critical: 0, default: 0, sheddable: 3 });
    // Per priority they sum to the totals by rule.
    expect(valueOf(samples, 'floodgate_blocks_total', { resource: 'search', kind: 'flow', rule: 'flow#0' })).toBe(3);
    expect(valueOf(samples, 'floodgate_passes_total', { resource: 'search' })).toBe(4);
  });

  it('reads the engine at each scrape, once for every metric together', async () => {
    const { fg } = engine();
    const registry = collect(fg);
    fg.entry('r').exit();
    const reads = jest.spyOn(fg, 'resourceNames');
    expect(valueOf(await scrape(registry), 'floodgate_passes_total', { resource: 'r' })).toBe(1);
    fg.entry('r').exit();
    expect(valueOf(await scrape(registry), 'floodgate_passes_total', { resource: 'r' })).toBe(2);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('bounds the resource labels whatever the number of resources: past maxResources they fold into other', async () => {
    const fg = new Floodgate({ clock: new ManualClock(), maxResources: 20_000 });
    const registry = collect(fg, { maxResources: 100 });
    for (let i = 0; i < 10_000; i++) fg.entry(`GET /item-${i}`).exit();
    const samples = await scrape(registry);
    const resources = new Set(samples.filter((s) => s.name === 'floodgate_passes_total').map((s) => s.labels.resource));
    expect(resources.size).toBe(101);
    expect(valueOf(samples, 'floodgate_passes_total', { resource: 'other' })).toBe(9900);
    expect(samples.filter((s) => s.name === 'floodgate_passes_total').reduce((sum, s) => sum + s.value, 0)).toBe(
      10_000,
    );
  });

  it('never puts a hotspot value in a label, however many values are blocked', async () => {
    const { fg } = engine();
    fg.loadHotParamRules([{ resource: 'GET /users/:id', paramKey: 'id', threshold: 0 }]);
    const registry = collect(fg);
    for (let i = 0; i < 1000; i++) fg.tryEntry('GET /users/:id', { params: { id: `user-${i}` } });
    const text = await registry.metrics();
    expect(text).not.toContain('user-');
    expect(valueOf(parseExposition(text), 'floodgate_blocks_total', { kind: 'hotParam', rule: 'hotParam#0' })).toBe(
      1000,
    );
  });

  it('escapes quotes, backslashes and newlines in resource names', async () => {
    const { fg } = engine();
    const registry = collect(fg);
    const name = 'GET /a"b\\c\nd';
    fg.entry(name).exit();
    expect(valueOf(await scrape(registry), 'floodgate_passes_total', { resource: name })).toBe(1);
  });

  it('names the metrics with the prefix given', async () => {
    const { fg } = engine();
    const registry = collect(fg, { prefix: 'shop_gate_' });
    fg.entry('r').exit();
    expect(valueOf(await scrape(registry), 'shop_gate_passes_total', { resource: 'r' })).toBe(1);
  });

  it('refuses a second exporter of the same names in one registry, and takes one again once the first is removed', () => {
    const { fg } = engine();
    const registry = new Registry();
    const stop = collectMetrics(fg, { registry });
    expect(() => collectMetrics(fg, { registry })).toThrow(
      /already has a metric named floodgate_passes_total.*another prefix/,
    );
    stop();
    expect(registry.getMetricsAsArray()).toEqual([]);
    stops.push(collectMetrics(fg, { registry }));
    expect(registry.getSingleMetric('floodgate_passes_total')).toBeDefined();
  });

  it('leaves the other metrics of the registry alone when removed', () => {
    const { fg } = engine();
    const registry = new Registry();
    new Counter({ name: 'app_requests_total', help: 'requests', registers: [registry] });
    const stop = collectMetrics(fg, { registry });
    stop();
    stop();
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(['app_requests_total']);
  });

  it("registers in prom-client's global registry by default", async () => {
    const { fg } = engine();
    const stop = collectMetrics(fg);
    try {
      fg.entry('r').exit();
      expect(
        valueOf(parseExposition(await globalRegistry.metrics()), 'floodgate_passes_total', { resource: 'r' }),
      ).toBe(1);
    } finally {
      stop();
    }
    expect(globalRegistry.getSingleMetric('floodgate_passes_total')).toBeUndefined();
  });

  it('serves OpenMetrics registries, with _total counters and # EOF', async () => {
    const { fg } = engine();
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const stop = collectMetrics(fg, { registry });
    fg.entry('r').exit();
    const text = await registry.metrics();
    expect(text).toContain('# TYPE floodgate_passes counter');
    expect(valueOf(parseExposition(text), 'floodgate_passes_total', { resource: 'r' })).toBe(1);
    expect(text.endsWith('# EOF\n')).toBe(true);
    stop();
    expect(registry.getMetricsAsArray()).toEqual([]);
  });

  it('answers getMetricsAsJSON with the same values', async () => {
    const { fg } = engine();
    const registry = collect(fg);
    fg.entry('r').exit();
    const json = await registry.getMetricsAsJSON();
    const passes = json.find((m) => m.name === 'floodgate_passes_total')!;
    expect(passes).toMatchObject({ type: 'counter', values: [{ labels: { resource: 'r' }, value: 1 }] });
  });

  it('rejects bad options, naming each', () => {
    const { fg } = engine();
    let error: unknown;
    try {
      collectMetrics(fg, { registry: {} as Registry, prefix: '9lives', maxResources: -1 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as RuleValidationError).issues.map((i) => i.path)).toEqual([
      'options.registry',
      'options.prefix',
      'options.maxResources',
    ]);
    expect((error as Error).message).toMatch(
      /^Invalid collectMetrics options: options.registry: must be a prom-client Registry; options.prefix: must be letters/,
    );
  });

  it('counts cluster fallbacks by reason when the Redis of a cluster rule is down', async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    const backend = redisCluster({
      client,
      prefix: `fg-test:prometheus:${process.pid}`,
      timeoutMs: 200,
      failureThreshold: 2,
      coolDownMs: 60_000,
    });
    try {
      await backend.ready();
      const fg = new Floodgate({ clock: new ManualClock(), cluster: backend });
      fg.loadFlowRules([{ resource: 'POST /checkout', threshold: 100, cluster: { thresholdType: 'global' } }]);
      const registry = collect(fg);
      const events: ClusterFallbackEvent[] = [];
      fg.on('clusterFallback', (event) => events.push(event));
      await server.stop();
      for (let i = 0; i < 4; i++) await fg.run('POST /checkout', () => 'ok');
      const exported = (await scrape(registry)).filter((s) => s.name === 'floodgate_cluster_fallbacks_total');
      const byReason = (reasons: string[]): Record<string, number> =>
        reasons.reduce<Record<string, number>>((out, r) => ({ ...out, [r]: (out[r] ?? 0) + 1 }), {});
      expect(events).toHaveLength(4);
      expect(Object.fromEntries(exported.map((s) => [s.labels.reason, s.value]))).toEqual(
        byReason(events.map((e) => e.reason)),
      );
      expect(exported.every((s) => s.labels.resource === 'POST /checkout' && s.labels.decided_by === 'local')).toBe(
        true,
      );
    } finally {
      await backend.close().catch(() => undefined);
      client.disconnect();
      await server.stop();
    }
  });
});
