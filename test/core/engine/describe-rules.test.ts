import { Floodgate } from '@floodgate/core';

describe('describeRules', () => {
  it('is empty for an engine without rules', () => {
    expect(new Floodgate().describeRules()).toEqual([]);
  });

  it('names the source of loaded rules, api by default', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'a', threshold: 1 }]);
    fg.loadCircuitBreakerRules([{ resource: 'b', strategy: 'errorCount', threshold: 3, retryTimeoutMs: 1000 }], {
      source: 'redis',
    });
    expect(fg.describeRules()).toEqual([
      {
        kind: 'flow',
        resource: 'a',
        rule: expect.objectContaining({ threshold: 1 }),
        layer: 'loaded',
        source: 'api',
        inForce: true,
      },
      {
        kind: 'circuitBreakers',
        resource: 'b',
        rule: expect.objectContaining({ strategy: 'errorCount' }),
        layer: 'loaded',
        source: 'redis',
        inForce: true,
      },
    ]);
  });

  it('records the source per kind, so loading one kind leaves the other kinds sources alone', () => {
    const fg = new Floodgate();
    fg.loadRules(
      { flow: [{ resource: 'a', threshold: 1 }], authority: [{ resource: 'a', origins: ['x'] }] },
      { source: 'file' },
    );
    fg.loadRules({ flow: [{ resource: 'a', threshold: 2 }] }, { source: 'dashboard' });
    const sources = fg.describeRules().map((d) => `${d.kind}:${d.source}`);
    expect(sources).toEqual(['authority:file', 'flow:dashboard']);
  });

  it('describes code-declared rules with source code, in force while no loaded rule of the kind and resource shadows them', () => {
    const fg = new Floodgate();
    fg.declareRules({
      flow: [
        { resource: 'a', threshold: 5 },
        { resource: 'b', threshold: 6 },
      ],
    });
    fg.loadFlowRules([{ resource: 'a', threshold: 1 }], { source: 'file' });
    const declared = fg.describeRules().filter((d) => d.layer === 'declared');
    expect(declared).toEqual([
      {
        kind: 'flow',
        resource: 'a',
        rule: expect.objectContaining({ threshold: 5 }),
        layer: 'declared',
        source: 'code',
        inForce: false,
      },
      {
        kind: 'flow',
        resource: 'b',
        rule: expect.objectContaining({ threshold: 6 }),
        layer: 'declared',
        source: 'code',
        inForce: true,
      },
    ]);
  });

  it('shows a declared rule in force again once the loaded rules that shadowed it are removed', () => {
    const fg = new Floodgate();
    fg.declareRules({ flow: [{ resource: 'a', threshold: 5 }] });
    fg.loadFlowRules([{ resource: 'a', threshold: 1 }]);
    fg.loadFlowRules([]);
    expect(fg.describeRules()).toEqual([expect.objectContaining({ layer: 'declared', inForce: true })]);
  });

  it('refuses a source that is not a non-empty string, and changes nothing', () => {
    const fg = new Floodgate();
    expect(() => fg.loadRules({ flow: [{ resource: 'a', threshold: 1 }] }, { source: '' })).toThrow(
      'options.source must be a non-empty string',
    );
    expect(() => fg.loadFlowRules([], { source: 7 as never })).toThrow('options.source must be a non-empty string');
    expect(fg.describeRules()).toEqual([]);
  });

  it('describes the rules that loading what it reports puts back unchanged', () => {
    const fg = new Floodgate();
    fg.loadRules({
      flow: [{ resource: 'a', threshold: 1, behavior: 'warmUp', warmUpPeriodMs: 1000 }],
      circuitBreakers: [
        { resource: 'a', strategy: 'slowRequestRatio', threshold: 0.5, maxAllowedRtMs: 100, retryTimeoutMs: 1000 },
      ],
      hotParams: [{ resource: 'a', paramIndex: 0, threshold: 3, specificItems: { vip: 10 } }],
      authority: [{ resource: 'a', origins: ['x'], strategy: 'deny' }],
    });
    const before = fg.describeRules();
    const again = new Floodgate();
    const byKind: Record<string, unknown[]> = {};
    for (const d of before) (byKind[d.kind] ??= []).push(JSON.parse(JSON.stringify(d.rule)));
    again.loadRules(byKind);
    expect(again.describeRules()).toEqual(before);
  });
});
