import diagnosticsChannel from 'node:diagnostics_channel';
import { Entry, Floodgate, RuleValidationError, type BlockError } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { DIAGNOSTICS_CHANNELS, type WouldBlockEvent } from '@floodgate/core/metrics';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';

function engine(options: { random?: () => number } = {}): { fg: Floodgate; clock: ManualClock; probe: ManualProbe } {
  const clock = new ManualClock(10_000);
  const probe = new ManualProbe();
  return { fg: new Floodgate({ clock, probe, ...options }), clock, probe };
}

/** Every `wouldBlock` event of `fg` from now on. */
function watch(fg: Floodgate): WouldBlockEvent[] {
  const events: WouldBlockEvent[] = [];
  fg.on('wouldBlock', (event) => events.push(event));
  return events;
}

/** Enters `resource` `n` times at once, keeping every entry open; the count of entries admitted. */
function admitted(fg: Floodgate, resource: string, n: number, options: object = {}): number {
  let passed = 0;
  for (let i = 0; i < n; i++) if (fg.tryEntry(resource, options) instanceof Entry) passed++;
  return passed;
}

function problems(rules: RuleSetOptions): string[] {
  try {
    new Floodgate().loadRules(rules);
  } catch (error) {
    if (error instanceof RuleValidationError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('rollout fields', () => {
  it('keeps mode and enforcePercent on the rule in force only where they differ from their defaults', () => {
    const { fg } = engine();
    const loaded = fg.loadRules({
      flow: [
        { resource: 'a', threshold: 1, mode: 'shadow' },
        { resource: 'a', threshold: 2, enforcePercent: 25 },
        { resource: 'a', threshold: 3, mode: 'enforce', enforcePercent: 100 },
      ],
    });
    expect(loaded.flow!.map((r) => [r.mode, r.enforcePercent])).toEqual([
      ['shadow', undefined],
      [undefined, 25],
      [undefined, undefined],
    ]);
    expect(fg.getRules().flow[0]).toMatchObject({ resource: 'a', threshold: 1, mode: 'shadow' });
    expect(fg.describeRules().find((d) => d.kind === 'flow')?.rule).toMatchObject({ mode: 'shadow' });
    expect('mode' in fg.getRules().flow[2]!).toBe(false);
  });

  it('takes the fields on every kind that refuses, read once for all kinds', () => {
    const { fg } = engine();
    fg.loadRules({
      authority: [{ resource: 'a', origins: ['x'], mode: 'shadow' }],
      system: [{ maxQps: 1, mode: 'shadow' }],
      pushback: [{ resource: 'a', mode: 'shadow' }],
      hotParams: [{ resource: 'a', paramIndex: 0, threshold: 1, enforcePercent: 10 }],
      flow: [{ resource: 'a', threshold: 1, mode: 'shadow' }],
      adaptiveThrottling: [{ resource: 'a', mode: 'shadow' }],
      retryBudgets: [{ resource: 'a', mode: 'shadow' }],
      circuitBreakers: [{ resource: 'a', strategy: 'errorCount', threshold: 1, retryTimeoutMs: 1000, mode: 'shadow' }],
    });
    const rules = fg.getRules();
    for (const kind of [
      'authority',
      'system',
      'pushback',
      'flow',
      'adaptiveThrottling',
      'retryBudgets',
      'circuitBreakers',
    ] as const)
      expect(rules[kind][0]!.mode).toBe('shadow');
    expect(rules.hotParams[0]!.enforcePercent).toBe(10);
  });

  it('names every bad rollout field by its path', () => {
    expect(
      problems({
        flow: [
          { resource: 'a', threshold: 1, mode: 'watch' as 'shadow' },
          { resource: 'a', threshold: 1, enforcePercent: 101 },
          { resource: 'a', threshold: 1, enforcePercent: -1 },
          { resource: 'a', threshold: 1, mode: 'shadow', enforcePercent: 50 },
        ],
      }),
    ).toEqual([
      `flow[0].mode: must be one of 'enforce', 'shadow', got "watch"`,
      'flow[1].enforcePercent: must be a finite number within [0, 100], got 101',
      'flow[2].enforcePercent: must be a finite number within [0, 100], got -1',
      "flow[3].enforcePercent: cannot be combined with mode: 'shadow' (a shadow rule enforces nothing); use one or the other",
    ]);
  });

  it('refuses a rollout field on a cluster rule', () => {
    expect(
      problems({ flow: [{ resource: 'a', threshold: 1, mode: 'shadow', cluster: { thresholdType: 'global' } }] }),
    ).toEqual(['flow[0].mode: cannot be combined with cluster: a shared limit is enforced alike by every instance']);
  });

  it('refuses the fields on API groups, which refuse nothing', () => {
    expect(problems({ apiGroups: [{ name: 'g', patterns: [{ pattern: '/a' }], mode: 'shadow' } as never] })[0]).toMatch(
      /^apiGroups\[0\]\.mode: unknown field/,
    );
  });

  it('reports problems of the kind and of the rollout fields together', () => {
    expect(problems({ flow: [{ resource: 'a', threshold: -1, enforcePercent: 200 }] })).toEqual([
      'flow[0].enforcePercent: must be a finite number within [0, 100], got 200',
      'flow[0].threshold: must be a finite number >= 0, got -1',
    ]);
  });

  it('declares shadow rules from code as it loads them', () => {
    const { fg } = engine();
    fg.declareRules({ flow: [{ resource: 'a', threshold: 0, mode: 'shadow' }] });
    expect(fg.tryEntry('a')).toBeInstanceOf(Entry);
  });
});

describe('shadow rules', () => {
  it('a shadow QPS rule never refuses and reports each call beyond its threshold', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 2, mode: 'shadow' }]);
    const events = watch(fg);
    expect(admitted(fg, 'r', 5, { origin: 'app' })).toBe(5);
    expect(events).toHaveLength(3);
    expect(events[0]).toMatchObject({
      resource: 'r',
      origin: 'app',
      kind: 'flow',
      ruleId: 'flow#0',
      code: 'ERR_FLOW_BLOCKED',
      enforced: false,
    });
    expect(events[0]!.error.rule).toBe(fg.getRules().flow[0]);
  });

  it('a shadow call is counted as passed, never as blocked', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 1, mode: 'shadow' }]);
    admitted(fg, 'r', 3);
    expect(fg.totals('r')).toMatchObject({ pass: 3, block: 0 });
    expect(fg.blocksByRule('r')).toEqual([]);
  });

  it('a shadow concurrency rule reports the calls beyond its threshold in flight', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 1, mode: 'shadow' }]);
    const events = watch(fg);
    const first = fg.entry('r');
    fg.entry('r');
    expect(events).toHaveLength(1);
    first.exit();
    expect(events).toHaveLength(1);
  });

  it('a shadow throttling rule never delays a call, and reports the wait it did not wait', async () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500, mode: 'shadow' }]);
    expect(fg.resourceInfo('r').mayWait).toBe(false);
    const events = watch(fg);
    // Pacing 10/s: one call per 100 ms; the next ones would wait, or beyond 500 ms be refused.
    for (let i = 0; i < 8; i++) (await fg.enter('r')).exit();
    expect(events.map((e) => e.code)).toEqual(Array(7).fill('ERR_FLOW_BLOCKED'));
  });

  it('a shadow hotspot rule reports the value it would refuse', () => {
    const { fg } = engine();
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 1, mode: 'shadow' }]);
    const events = watch(fg);
    expect(admitted(fg, 'r', 3, { args: ['u1'] })).toBe(3);
    expect(events.map((e) => [e.code, (e.error as BlockError & { value: unknown }).value])).toEqual([
      ['ERR_HOT_PARAM_BLOCKED', 'u1'],
      ['ERR_HOT_PARAM_BLOCKED', 'u1'],
    ]);
  });

  it('a shadow system rule lets inbound calls through and reports them', () => {
    const { fg, probe } = engine();
    fg.loadSystemRules([{ maxHeapUsedBytes: 1000, mode: 'shadow' }]);
    probe.set({ heapUsedBytes: 2000 });
    const events = watch(fg);
    expect(fg.tryEntry('GET /a', { inbound: true })).toBeInstanceOf(Entry);
    expect(events).toMatchObject([{ kind: 'system', ruleId: 'system#0', code: 'ERR_SYSTEM_BLOCKED' }]);
  });

  it('of two system rules, only the shadow one lets a call through', () => {
    const { fg, probe } = engine();
    fg.loadSystemRules([{ maxHeapUsedBytes: 1000, mode: 'shadow' }, { maxRssBytes: 1000 }]);
    probe.set({ heapUsedBytes: 2000, rssBytes: 500 });
    expect(fg.tryEntry('GET /a', { inbound: true })).toBeInstanceOf(Entry);
    probe.set({ heapUsedBytes: 500, rssBytes: 2000 });
    expect(fg.tryEntry('GET /a', { inbound: true })).toMatchObject({ code: 'ERR_SYSTEM_BLOCKED' });
  });

  it('a shadow authority rule lets a denied origin through and reports it', () => {
    const { fg } = engine();
    fg.loadAuthorityRules([{ resource: 'r', strategy: 'deny', origins: ['bot'], mode: 'shadow' }]);
    const events = watch(fg);
    expect(fg.tryEntry('r', { origin: 'bot' })).toBeInstanceOf(Entry);
    expect(events).toMatchObject([{ kind: 'authority', code: 'ERR_AUTHORITY_BLOCKED', origin: 'bot' }]);
  });

  it('a shadow breaker that is open lets calls through and still records their outcome', () => {
    const { fg, clock } = engine();
    fg.loadCircuitBreakerRules([
      {
        resource: 'r',
        strategy: 'errorCount',
        threshold: 1,
        minRequestAmount: 1,
        retryTimeoutMs: 1000,
        mode: 'shadow',
      },
    ]);
    const events = watch(fg);
    for (let i = 0; i < 2; i++) {
      const entry = fg.entry('r');
      entry.traceError(new Error('down'));
      entry.exit();
    }
    expect(fg.circuitState('r')[0]!.state).toBe('open');
    const through = fg.entry('r');
    through.traceError(new Error('still down'));
    through.exit();
    expect(events).toMatchObject([{ kind: 'circuitBreaker', code: 'ERR_CIRCUIT_OPEN' }]);
    expect(fg.totals('r')).toMatchObject({ pass: 3, error: 3 });
    // After retryTimeoutMs, a probe passes; its success closes the breaker, as if enforced.
    clock.advance(1000);
    fg.entry('r').exit();
    expect(fg.circuitState('r')[0]!.state).toBe('closed');
  });

  it('a shadow rule spends nothing when a later enforced rule refuses the call', () => {
    const { fg } = engine();
    fg.loadRules({
      hotParams: [{ resource: 'r', paramIndex: 0, threshold: 1, mode: 'shadow' }],
      flow: [{ resource: 'r', threshold: 0 }],
    });
    expect(fg.tryEntry('r', { args: ['u1'] })).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    fg.loadRules({ flow: [] });
    const events = watch(fg);
    // The token the refused call took was given back: u1 still has its one call.
    fg.entry('r', { args: ['u1'] });
    expect(events).toEqual([]);
  });

  it('a rule moved from shadow to enforced by reload keeps its state', () => {
    const { fg } = engine();
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 2, mode: 'shadow' }]);
    fg.entry('r', { args: ['u1'] });
    fg.entry('r', { args: ['u1'] });
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    // The bucket the shadow rule spent is the one the enforced rule reads.
    expect(fg.tryEntry('r', { args: ['u1'] })).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'hotParam', ruleId: 'hotParam#0', count: 1 }]);
  });

  it('a breaker moved from shadow to enforced stays open', () => {
    const { fg } = engine();
    const breaker = {
      resource: 'r',
      strategy: 'errorCount',
      threshold: 0,
      minRequestAmount: 1,
      retryTimeoutMs: 1000,
    } as const;
    fg.loadCircuitBreakerRules([{ ...breaker, mode: 'shadow' }]);
    const entry = fg.entry('r');
    entry.traceError(new Error('down'));
    entry.exit();
    fg.loadCircuitBreakerRules([breaker]);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
  });

  it('marks the entry a shadow rule let through with the refusal it did not enforce', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0, mode: 'shadow' }]);
    expect(fg.entry('r').wouldBlock).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    fg.loadFlowRules([{ resource: 'r', threshold: 10, mode: 'shadow' }]);
    expect(fg.entry('r').wouldBlock).toBeUndefined();
  });

  it('publishes wouldBlock on its diagnostics channel', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0, mode: 'shadow' }]);
    const messages: unknown[] = [];
    const onMessage = (message: unknown): void => void messages.push(message);
    diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.wouldBlock, onMessage);
    try {
      fg.entry('r');
    } finally {
      diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS.wouldBlock, onMessage);
    }
    expect(DIAGNOSTICS_CHANNELS.wouldBlock).toBe('floodgate:would-block');
    expect(messages).toMatchObject([{ floodgate: fg, event: { resource: 'r', ruleId: 'flow#0', enforced: false } }]);
  });
});

describe('enforcement by percentage', () => {
  /** A scripted random source: each draw the next value, in turn. */
  const scripted = (...values: number[]): (() => number) => {
    let i = 0;
    return () => values[i++ % values.length]!;
  };

  it('refuses a call beyond the threshold when the draw falls within the percentage, else lets it through', () => {
    const { fg } = engine({ random: scripted(0.2, 0.4) });
    fg.loadFlowRules([{ resource: 'r', threshold: 0, enforcePercent: 30 }]);
    const events = watch(fg);
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' }); // 0.2 × 100 < 30
    expect(fg.tryEntry('r')).toBeInstanceOf(Entry); // 0.4 × 100 >= 30
    expect(events).toHaveLength(1);
  });

  it('draws nothing for a call the rule lets through', () => {
    const random = jest.fn(() => 0);
    const { fg } = engine({ random });
    fg.loadFlowRules([{ resource: 'r', threshold: 5, enforcePercent: 50 }]);
    admitted(fg, 'r', 5);
    expect(random).not.toHaveBeenCalled();
  });

  it('enforcePercent 0 refuses nothing, as a shadow rule', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0, enforcePercent: 0 }]);
    expect(admitted(fg, 'r', 10)).toBe(10);
  });

  it('enforces its share of a QPS rule within binomial bounds (fixed seed)', () => {
    const { fg } = engine({ random: seeded(42) });
    fg.loadFlowRules([{ resource: 'r', threshold: 0, enforcePercent: 30 }]);
    const n = 10_000;
    const refused = n - admitted(fg, 'r', n);
    // Binomial(10 000, 0.3): mean 3000, sd ≈ 45.8; 4.5 sd either side.
    expect(refused).toBeGreaterThan(3000 - 206);
    expect(refused).toBeLessThan(3000 + 206);
  });

  it('decides a hotspot rule per value: one value is always refused or always let through', () => {
    const { fg } = engine();
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 0, enforcePercent: 50 }]);
    const users = Array.from({ length: 2000 }, (_, i) => `user-${i}`);
    const first = users.map((u) => fg.tryEntry('r', { args: [u] }) instanceof Entry);
    const again = users.map((u) => fg.tryEntry('r', { args: [u] }) instanceof Entry);
    expect(again).toEqual(first);
    const refused = first.filter((passed) => !passed).length;
    // Binomial(2000, 0.5): sd ≈ 22.4; 4.5 sd either side.
    expect(refused).toBeGreaterThan(1000 - 101);
    expect(refused).toBeLessThan(1000 + 101);
  });

  it('raising the percentage of a hotspot rule only adds values to those refused', () => {
    const { fg } = engine();
    const users = Array.from({ length: 500 }, (_, i) => `user-${i}`);
    const refusedAt = (percent: number): Set<string> => {
      fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 0, enforcePercent: percent }]);
      return new Set(users.filter((u) => !(fg.tryEntry('r', { args: [u] }) instanceof Entry)));
    };
    const ten = refusedAt(10);
    const fifty = refusedAt(50);
    expect([...ten].every((u) => fifty.has(u))).toBe(true);
    expect(fifty.size).toBeGreaterThan(ten.size);
  });

  it('a throttling rule waits out the calls it enforces and lets the others through at once', async () => {
    const { fg, clock } = engine({ random: scripted(0.1, 0.9) });
    fg.loadFlowRules([
      { resource: 'r', threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 500, enforcePercent: 50 },
    ]);
    const events = watch(fg);
    (await fg.enter('r')).exit();
    // Enforced (0.1): waits its 100 ms pacing slot.
    const waited = fg.enter('r');
    let settled = false;
    void waited.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    // Not enforced (0.9): passes at once, its slot given back.
    const through = await fg.enter('r');
    expect(events).toMatchObject([{ code: 'ERR_FLOW_BLOCKED', waitMs: 200 }]);
    through.exit();
    clock.advance(100);
    (await waited).exit();
  });
});

/** A small seeded generator (mulberry32), for draws that are fixed from run to run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
