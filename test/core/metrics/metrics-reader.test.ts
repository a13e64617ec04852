import { Entry, Floodgate, RuleValidationError, TimeoutError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { METRICS_READER_DEFAULTS, MetricsReader, OTHER_RESOURCES, type ResourceMetrics } from '@floodgate/core/metrics';
import fc from 'fast-check';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

const engine = (): { fg: Floodgate; clock: ManualClock } => {
  const clock = new ManualClock();
  return { fg: new Floodgate({ clock }), clock };
};

const byResource = (reader: MetricsReader): Record<string, ResourceMetrics> =>
  Object.fromEntries(reader.read().resources.map((r) => [r.resource, r]));

describe('MetricsReader', () => {
  let readers: MetricsReader[] = [];
  const readerOf = (fg: Floodgate, options?: ConstructorParameters<typeof MetricsReader>[1]): MetricsReader => {
    const reader = new MetricsReader(fg, options);
    readers.push(reader);
    return reader;
  };
  afterEach(() => {
    for (const reader of readers) reader.close();
    readers = [];
  });

  it('reads passes, cancels, blocks, successes, errors, timeouts and response times from the engine totals', async () => {
    const { fg, clock } = engine();
    fg.loadRules({
      flow: [{ resource: 'r', threshold: 3 }],
      hotParams: [{ resource: 'r', paramIndex: 0, threshold: 1 }],
    });
    const reader = readerOf(fg);
    const ok = fg.entry('r', { args: ['a'] });
    await clock.advance(3);
    ok.exit();
    const failing = fg.entry('r', { args: ['b'] });
    await clock.advance(40);
    failing.traceError(new Error('down'));
    failing.exit();
    fg.tryEntry('r', { args: ['a'] }); // hotspot block
    const slow = expect(
      fg.run('r', () => new Promise(() => undefined), { args: ['d'], timeoutMs: 30 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    await clock.advance(30);
    await slow;
    expect(byResource(reader).r).toMatchObject({
      resource: 'r',
      passed: 3,
      cancelled: 0,
      blocked: 1,
      succeeded: 1,
      failed: 2,
      timedOut: 1,
      rtSumMs: 73,
      // The timed-out call's function still runs: it holds its slot.
      concurrency: 1,
    });
  });

  it('counts exited calls without an error as successes, and never lets that count go down', async () => {
    const { fg, clock } = engine();
    const reader = readerOf(fg);
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const entry = fg.entry('r');
      await clock.advance(1);
      if (i % 2 === 1) entry.traceError(new Error('odd'));
      entry.exit();
      seen.push(byResource(reader).r!.succeeded);
    }
    expect(seen).toEqual([1, 1, 2, 2, 3, 3]);
    expect(byResource(reader).r!.failed).toBe(3);
  });

  it('gives blocks by rule, and counts admitted calls given back by a later check as cancels', () => {
    const { fg } = engine();
    fg.loadRules({
      flow: [{ resource: 'r', threshold: 100 }],
      circuitBreakers: [
        { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
      ],
    });
    const reader = readerOf(fg);
    const failing = fg.entry('r');
    failing.traceError(new Error('down'));
    failing.exit();
    fg.tryEntry('r');
    const r = byResource(reader).r!;
    expect(r.blocksByRule).toEqual([{ kind: 'circuitBreaker', ruleId: 'circuitBreaker#0', count: 1 }]);
    expect(r.blocked).toBe(1);
  });

  it('rounds histogram bounds to the nearest bound the engine counts by, on a log scale, merging those that round alike', () => {
    const { fg } = engine();
    const reader = readerOf(fg, { rtBucketsMs: [0.1, 7.5, 25, 250, 2500, 20, 1e9] });
    expect(reader.rtBucketsMs).toEqual([0.5, 10, 20, 200, 2000, 60_000]);
  });

  it('uses Prometheus-like default bounds, 5 ms to 10 s', () => {
    expect(readerOf(engine().fg).rtBucketsMs).toEqual(METRICS_READER_DEFAULTS.rtBucketsMs);
  });

  it('gives cumulative response-time counts per bound, the last one counting every exited call', async () => {
    const { fg, clock } = engine();
    const reader = readerOf(fg, { rtBucketsMs: [10, 100] });
    for (const ms of [1, 10, 11, 100, 5000]) {
      const entry = fg.entry('r');
      await clock.advance(ms);
      entry.exit();
    }
    const r = byResource(reader).r!;
    expect(r.rtCumulative).toEqual([2, 4, 5]);
    expect(r.rtSumMs).toBe(5122);
  });

  it('folds every resource past maxResources into other, summing their counters', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'c', threshold: 0 }]);
    const reader = readerOf(fg, { maxResources: 2 });
    for (const name of ['a', 'b', 'c', 'd', 'c']) {
      const result = fg.tryEntry(name);
      if (result instanceof Entry) result.exit();
    }
    const { resources } = reader.read();
    expect(resources.map((r) => [r.resource, r.passed, r.blocked])).toEqual([
      // 'c' was tracked first, when its rule was loaded
      ['c', 0, 2],
      ['a', 1, 0],
      [OTHER_RESOURCES, 2, 0],
    ]);
  });

  it('keeps a labelled resource labelled however many resources come after it', () => {
    const { fg } = engine();
    const reader = readerOf(fg, { maxResources: 3 });
    for (let i = 0; i < 50; i++) fg.entry(`r${i}`).exit();
    const first = reader.read().resources.map((r) => r.resource);
    for (let i = 50; i < 500; i++) fg.entry(`r${i}`).exit();
    expect(reader.read().resources.map((r) => r.resource)).toEqual(first);
    expect(first).toEqual(['r0', 'r1', 'r2', OTHER_RESOURCES]);
  });

  it(
    'loses no count when folding, and makes at most maxResources + 1 resource labels (property)',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 200 }),
          fc.integer({ min: 1, max: 10 }),
          (calls, maxResources) => {
            const { fg } = engine();
            fg.loadFlowRules([{ resource: 'r7', threshold: 2 }]);
            const reader = new MetricsReader(fg, { maxResources });
            try {
              for (const n of calls) {
                const result = fg.tryEntry(`r${n}`);
                if (result instanceof Entry) result.exit();
              }
              const { resources } = reader.read();
              expect(resources.length).toBeLessThanOrEqual(maxResources + 1);
              const sum = (f: (r: ResourceMetrics) => number): number => resources.reduce((s, r) => s + f(r), 0);
              const totals = fg.resourceNames().map((name) => fg.totals(name)!);
              expect(sum((r) => r.passed)).toBe(totals.reduce((s, t) => s + t.pass, 0));
              expect(sum((r) => r.blocked)).toBe(totals.reduce((s, t) => s + t.block, 0));
              expect(sum((r) => r.blocksByRule.reduce((s, b) => s + b.count, 0))).toBe(sum((r) => r.blocked));
            } finally {
              reader.close();
            }
          },
        ),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );

  it('reads each breaker state of labelled resources, and counts every breaker by state', () => {
    const { fg } = engine();
    const breaker = (resource: string) => ({
      resource,
      strategy: 'errorCount' as const,
      threshold: 0,
      minRequestAmount: 1,
      retryTimeoutMs: 1000,
    });
    fg.loadCircuitBreakerRules([breaker('a'), { ...breaker('a'), threshold: 5 }, breaker('b')]);
    const reader = readerOf(fg, { maxResources: 1 });
    for (const name of ['a', 'b']) {
      const entry = fg.entry(name);
      entry.traceError(new Error('down'));
      entry.exit();
    }
    const snapshot = reader.read();
    expect(snapshot.breakers).toEqual([
      { resource: 'a', ruleId: 'circuitBreaker#0', state: 'open' },
      { resource: 'a', ruleId: 'circuitBreaker#1', state: 'closed' },
    ]);
    expect(snapshot.breakersByState).toEqual({ closed: 1, open: 2, halfOpen: 0 });
  });

  it('counts breaker transitions from its creation on, those of folded resources under other', async () => {
    const { fg, clock } = engine();
    const breaker = (resource: string) => ({
      resource,
      strategy: 'errorCount' as const,
      threshold: 0,
      minRequestAmount: 1,
      retryTimeoutMs: 1000,
    });
    fg.loadCircuitBreakerRules([breaker('a'), breaker('b'), breaker('c')]);
    const trip = (name: string): void => {
      const entry = fg.entry(name);
      entry.traceError(new Error('down'));
      entry.exit();
    };
    trip('a'); // before the reader: not counted
    const reader = readerOf(fg, { maxResources: 1 });
    await clock.advance(1000);
    trip('a'); // open → halfOpen, then the probe fails: halfOpen → open
    trip('b');
    trip('c');
    expect(reader.read().transitions).toEqual([
      { resource: 'a', ruleId: 'circuitBreaker#0', from: 'open', to: 'halfOpen', count: 1 },
      { resource: 'a', ruleId: 'circuitBreaker#0', from: 'halfOpen', to: 'open', count: 1 },
      { resource: OTHER_RESOURCES, ruleId: 'circuitBreaker#0', from: 'closed', to: 'open', count: 2 },
    ]);
  });

  it('stops counting transitions once closed', () => {
    const { fg } = engine();
    fg.loadCircuitBreakerRules([
      { resource: 'a', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const reader = readerOf(fg);
    reader.close();
    const entry = fg.entry('a');
    entry.traceError(new Error('down'));
    entry.exit();
    expect(reader.read().transitions).toEqual([]);
  });

  it('reads the number of listener errors of the engine', () => {
    const { fg } = engine();
    const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      fg.on('pass', () => {
        throw new Error('broken listener');
      });
      fg.entry('r').exit();
      fg.entry('r').exit();
      expect(readerOf(fg).read().listenerErrors).toBe(2);
    } finally {
      warnings.mockRestore();
    }
  });

  it("rejects bad options, naming each, with the exporter's own problems and keys", () => {
    const { fg } = engine();
    let error: unknown;
    try {
      new MetricsReader(fg, { maxResources: 0, rtBucketsMs: [5, -1, Number.NaN], colour: 'red' } as never, {
        context: 'Invalid collectMetrics options',
        ownKeys: ['registry'],
        issues: [{ path: 'options.registry', message: 'must be a prom-client Registry' }],
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleValidationError);
    expect((error as RuleValidationError).message).toMatch(/^Invalid collectMetrics options: /);
    expect((error as RuleValidationError).issues.map((i) => i.path)).toEqual([
      'options.registry',
      'options.colour',
      'options.maxResources',
      'options.rtBucketsMs[1]',
      'options.rtBucketsMs[2]',
    ]);
    expect((error as RuleValidationError).issues[1]!.message).toBe(
      'unknown field (allowed: maxResources, rtBucketsMs, registry)',
    );
  });

  it('rejects an empty list of bounds', () => {
    expect(() => new MetricsReader(engine().fg, { rtBucketsMs: [] })).toThrow(
      'options.rtBucketsMs: must hold at least one bound, got []',
    );
  });

  it('rejects what is not an engine, saying what it wants', () => {
    expect(() => new MetricsReader({} as never)).toThrow(TypeError);
    expect(() => new MetricsReader(undefined as never)).toThrow(
      'floodgate must be a Floodgate engine (from @floodgate/core), got undefined',
    );
  });
});
