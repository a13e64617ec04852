import { Entry, Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { BLOCK_SPAN_EVENT, METER_NAME, instrumentFloodgate } from '@floodgate/opentelemetry';
import { context, metrics, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** One data point of a collection: its instrument, attributes and value. */
interface Point {
  readonly name: string;
  readonly attributes: Attributes;
  readonly value: number;
}

/** A meter provider whose in-memory exporter is flushed on demand (no timer ever fires). */
class Collector {
  readonly exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  readonly reader = new PeriodicExportingMetricReader({ exporter: this.exporter, exportIntervalMillis: 3_600_000 });
  readonly provider = new MeterProvider({ readers: [this.reader] });

  /** Collects now; every data point of Floodgate's meter. */
  async collect(): Promise<Point[]> {
    this.exporter.reset();
    await this.reader.forceFlush();
    const points: Point[] = [];
    for (const resourceMetrics of this.exporter.getMetrics()) {
      for (const scope of resourceMetrics.scopeMetrics) {
        if (scope.scope.name !== METER_NAME) continue;
        for (const metric of scope.metrics) {
          for (const point of metric.dataPoints)
            points.push({ name: metric.descriptor.name, attributes: point.attributes, value: point.value as number });
        }
      }
    }
    return points;
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

const valueOf = (points: readonly Point[], name: string, attributes: Attributes = {}): number => {
  const found = points.filter(
    (p) => p.name === name && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
  );
  if (found.length !== 1)
    throw new Error(
      `${found.length} points of ${name} ${JSON.stringify(attributes)}: ${JSON.stringify(points.filter((p) => p.name === name))}`,
    );
  return found[0]!.value;
};

const engine = (): { fg: Floodgate; clock: ManualClock } => {
  const clock = new ManualClock();
  return { fg: new Floodgate({ clock }), clock };
};

describe('instrumentFloodgate', () => {
  let collector: Collector;
  let stops: (() => void)[] = [];
  const instrument = (fg: Floodgate, options: Parameters<typeof instrumentFloodgate>[1] = {}): void => {
    stops.push(instrumentFloodgate(fg, { meterProvider: collector.provider, ...options }));
  };
  beforeEach(() => {
    collector = new Collector();
  });
  afterEach(async () => {
    for (const stop of stops) stop();
    stops = [];
    await collector.shutdown();
  });

  it('observes the calls a shadow rule let through, by resource, kind and rule', async () => {
    const { fg } = engine();
    fg.loadRules({ flow: [{ resource: 'r', threshold: 1, mode: 'shadow' }] });
    instrument(fg);
    for (let i = 0; i < 4; i++) fg.entry('r').exit();
    const points = await collector.collect();
    expect(
      valueOf(points, 'floodgate.would_blocks', {
        'floodgate.resource': 'r',
        'floodgate.kind': 'flow',
        'floodgate.rule': 'flow#0',
      }),
    ).toBe(3);
    expect(points.filter((p) => p.name === 'floodgate.blocks')).toEqual([]);
  });

  it('observes passes, blocks by kind and rule, successes, errors, timeouts and concurrency per resource', async () => {
    const { fg, clock } = engine();
    fg.loadRules({
      flow: [{ resource: 'GET /search', threshold: 2 }],
      hotParams: [{ resource: 'GET /users/:id', paramKey: 'id', threshold: 0 }],
    });
    instrument(fg);
    for (let i = 0; i < 5; i++) {
      const result = fg.tryEntry('GET /search');
      if (result instanceof Entry) {
        await clock.advance(10);
        if (i === 1) result.traceError(new Error('down'));
        result.exit();
      }
    }
    fg.tryEntry('GET /users/:id', { params: { id: 'user-42' } });
    const held = fg.entry('GET /users/:id');
    const points = await collector.collect();
    const search = { 'floodgate.resource': 'GET /search' };
    expect(valueOf(points, 'floodgate.passes', search)).toBe(2);
    expect(
      valueOf(points, 'floodgate.blocks', { ...search, 'floodgate.kind': 'flow', 'floodgate.rule': 'flow#0' }),
    ).toBe(3);
    expect(
      valueOf(points, 'floodgate.blocks', {
        'floodgate.resource': 'GET /users/:id',
        'floodgate.kind': 'hotParam',
        'floodgate.rule': 'hotParam#0',
      }),
    ).toBe(1);
    expect(valueOf(points, 'floodgate.successes', search)).toBe(1);
    expect(valueOf(points, 'floodgate.errors', search)).toBe(1);
    expect(valueOf(points, 'floodgate.timeouts', search)).toBe(0);
    expect(valueOf(points, 'floodgate.cancels', search)).toBe(0);
    expect(valueOf(points, 'floodgate.concurrency', { 'floodgate.resource': 'GET /users/:id' })).toBe(1);
    expect(valueOf(points, 'floodgate.listener_errors')).toBe(0);
    expect(JSON.stringify(points)).not.toContain('user-42');
    held.exit();
  });

  it('observes response times as cumulative counts per bound, with their sum in seconds and their count', async () => {
    const { fg, clock } = engine();
    instrument(fg, { rtBucketsMs: [10, 100] });
    for (const ms of [4, 40, 400]) {
      const entry = fg.entry('r');
      await clock.advance(ms);
      entry.exit();
    }
    const points = await collector.collect();
    const r = { 'floodgate.resource': 'r' };
    expect(
      ['0.01', '0.1', '+Inf'].map((le) =>
        valueOf(points, 'floodgate.response_time.bucket', { ...r, 'floodgate.le': le }),
      ),
    ).toEqual([1, 2, 3]);
    expect(valueOf(points, 'floodgate.response_time.sum', r)).toBeCloseTo(0.444, 9);
    expect(valueOf(points, 'floodgate.response_time.count', r)).toBe(3);
  });

  it('observes each breaker state, the breakers in each state, and transitions', async () => {
    const { fg } = engine();
    fg.loadCircuitBreakerRules([
      { resource: 'GET /feed', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 60_000 },
    ]);
    instrument(fg);
    const entry = fg.entry('GET /feed');
    entry.traceError(new Error('down'));
    entry.exit();
    const points = await collector.collect();
    const feed = { 'floodgate.resource': 'GET /feed', 'floodgate.rule': 'circuitBreaker#0' };
    expect(valueOf(points, 'floodgate.circuit_breaker.state', feed)).toBe(1);
    expect(valueOf(points, 'floodgate.circuit_breakers', { 'floodgate.state': 'open' })).toBe(1);
    expect(valueOf(points, 'floodgate.circuit_breakers', { 'floodgate.state': 'closed' })).toBe(0);
    expect(
      valueOf(points, 'floodgate.circuit_breaker.transitions', {
        ...feed,
        'floodgate.from': 'closed',
        'floodgate.to': 'open',
      }),
    ).toBe(1);
  });

  it('observes passes and blocks by priority, with a floodgate.priority attribute', async () => {
    const { fg } = engine();
    fg.loadFlowRules([
      { resource: 'search', metric: 'concurrency', threshold: 4, partitions: { critical: 0.5, sheddable: 0.5 } },
    ]);
    instrument(fg);
    fg.entry('search', { priority: 'critical' });
    for (let i = 0; i < 5; i++) fg.tryEntry('search', { priority: 'sheddable' });
    fg.entry('search', { priority: 'critical' });
    const points = await collector.collect();
    const of = (name: string): Record<string, number> =>
      Object.fromEntries(
        points
          .filter((p) => p.name === name && p.attributes['floodgate.resource'] === 'search')
          .map((p) => [p.attributes['floodgate.priority'], p.value]),
      );
    expect(of('floodgate.passes.by_priority')).toEqual({ critical: 2, default: 0, sheddable: 2 });
    expect(of('floodgate.blocks.by_priority')).toEqual({ critical: 0, default: 0, sheddable: 3 });
  });

  it('reads the engine at each collection', async () => {
    const { fg } = engine();
    instrument(fg);
    fg.entry('r').exit();
    expect(valueOf(await collector.collect(), 'floodgate.passes')).toBe(1);
    fg.entry('r').exit();
    expect(valueOf(await collector.collect(), 'floodgate.passes')).toBe(2);
  });

  it('bounds the resource attribute: past maxResources, resources fold into other', async () => {
    const { fg } = engine();
    instrument(fg, { maxResources: 10 });
    for (let i = 0; i < 500; i++) fg.entry(`GET /item-${i}`).exit();
    const passes = (await collector.collect()).filter((p) => p.name === 'floodgate.passes');
    expect(passes).toHaveLength(11);
    expect(valueOf(passes, 'floodgate.passes', { 'floodgate.resource': 'other' })).toBe(490);
  });

  it('stops observing once stopped', async () => {
    const { fg } = engine();
    const stop = instrumentFloodgate(fg, { meterProvider: collector.provider });
    fg.entry('r').exit();
    stop();
    stop();
    expect(await collector.collect()).toEqual([]);
  });

  it('uses the global meter provider by default', async () => {
    const { fg } = engine();
    metrics.setGlobalMeterProvider(collector.provider);
    try {
      stops.push(instrumentFloodgate(fg));
      fg.entry('r').exit();
      expect(valueOf(await collector.collect(), 'floodgate.passes')).toBe(1);
    } finally {
      metrics.disable();
    }
  });

  it('rejects bad options, naming each', () => {
    const { fg } = engine();
    let error: unknown;
    try {
      instrumentFloodgate(fg, { meterProvider: {} as never, spanEvents: 'yes' as never, rtBucketsMs: [0] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as RuleValidationError).issues.map((i) => i.path)).toEqual([
      'options.meterProvider',
      'options.spanEvents',
      'options.rtBucketsMs[0]',
    ]);
    expect((error as Error).message).toMatch(/^Invalid instrumentFloodgate options: /);
  });
});

describe('instrumentFloodgate span events', () => {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const tracer = tracerProvider.getTracer('test');
  const meterProvider = new MeterProvider();
  const contextManager = new AsyncLocalStorageContextManager();
  let stops: (() => void)[] = [];

  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(async () => {
    context.disable();
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  });
  afterEach(() => {
    for (const stop of stops) stop();
    stops = [];
    spans.reset();
  });

  const blockedEngine = (options: Parameters<typeof instrumentFloodgate>[1] = {}): Floodgate => {
    const { fg } = engine();
    fg.loadRules({
      flow: [
        { resource: 'GET /search', threshold: 0 },
        { resource: 'GET /export', threshold: 1 },
      ],
      hotParams: [{ resource: 'GET /users/:id', paramKey: 'id', threshold: 0 }],
    });
    stops.push(instrumentFloodgate(fg, { meterProvider, ...options }));
    return fg;
  };

  it('adds a floodgate.block event to the active span with the resource, kind, rule, code, priority and retry delay', () => {
    const fg = blockedEngine();
    tracer.startActiveSpan('GET /export', (span) => {
      fg.entry('GET /export').exit();
      fg.tryEntry('GET /export', { priority: 'sheddable' });
      span.end();
    });
    const [span] = spans.getFinishedSpans();
    expect(span!.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        BLOCK_SPAN_EVENT,
        {
          'floodgate.resource': 'GET /export',
          'floodgate.kind': 'flow',
          'floodgate.rule': 'flow#0',
          'floodgate.code': 'ERR_FLOW_BLOCKED',
          'floodgate.priority': 'sheddable',
          'floodgate.retry_after_ms': 1000,
        },
      ],
    ]);
  });

  it('adds the event to the span active in the async continuation that was blocked', async () => {
    const fg = blockedEngine();
    await tracer.startActiveSpan('GET /search', async (span) => {
      await Promise.resolve();
      await fg.run('GET /search', () => 'ran', { fallback: () => 'fallback' });
      span.end();
    });
    expect(spans.getFinishedSpans()[0]!.events.map((e) => e.name)).toEqual([BLOCK_SPAN_EVENT]);
  });

  it('never puts the hotspot value in the event', () => {
    const fg = blockedEngine();
    tracer.startActiveSpan('GET /users/:id', (span) => {
      fg.tryEntry('GET /users/:id', { params: { id: 'user-42' } });
      span.end();
    });
    const [event] = spans.getFinishedSpans()[0]!.events;
    expect(event!.attributes).toMatchObject({ 'floodgate.kind': 'hotParam', 'floodgate.rule': 'hotParam#0' });
    expect(JSON.stringify(event)).not.toContain('user-42');
  });

  it('adds nothing, and fails nothing, when no span is active', () => {
    const fg = blockedEngine();
    expect(fg.tryEntry('GET /search')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(fg.listenerErrors).toBe(0);
    expect(spans.getFinishedSpans()).toEqual([]);
  });

  it('adds nothing to a span that is not recording', () => {
    const fg = blockedEngine();
    tracer.startActiveSpan('outer', (span) => {
      span.end(); // ended: no longer recording
      fg.tryEntry('GET /search');
    });
    expect(spans.getFinishedSpans().flatMap((s) => s.events)).toEqual([]);
  });

  it('adds no event when spanEvents is false', () => {
    const fg = blockedEngine({ spanEvents: false });
    tracer.startActiveSpan('GET /search', (span) => {
      fg.tryEntry('GET /search');
      span.end();
    });
    expect(spans.getFinishedSpans()[0]!.events).toEqual([]);
  });

  it('stops adding events once stopped', () => {
    const fg = blockedEngine();
    stops.pop()!();
    tracer.startActiveSpan('GET /search', (span) => {
      fg.tryEntry('GET /search');
      span.end();
    });
    expect(spans.getFinishedSpans()[0]!.events).toEqual([]);
  });
});
