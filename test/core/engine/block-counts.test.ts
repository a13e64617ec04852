import { Entry, Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { BlockEvent } from '@floodgate/core/metrics';
import fc from 'fast-check';
import { ruleIdOf } from '../../../packages/core/src/engine/block-counts';
import { FlowBlockError } from '../../../packages/core/src/flow/flow-rule';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

const engine = (): { fg: Floodgate; clock: ManualClock } => {
  const clock = new ManualClock();
  return { fg: new Floodgate({ clock }), clock };
};

describe('blocks by rule', () => {
  it('counts each block under its kind and the rule position among the resource rules of that kind', () => {
    const { fg } = engine();
    fg.loadRules({
      authority: [{ resource: 'r', strategy: 'deny', origins: ['evil'] }],
      flow: [
        { resource: 'other', threshold: 100 },
        { resource: 'r', threshold: 100 },
        { resource: 'r', threshold: 1, limitOrigin: 'app' },
      ],
      hotParams: [{ resource: 'r', paramIndex: 0, threshold: 1 }],
    });
    fg.entry('r', { origin: 'app' }).exit();
    fg.tryEntry('r', { origin: 'app' });
    fg.tryEntry('r', { origin: 'evil' });
    fg.entry('r', { args: ['user-1'] }).exit();
    fg.tryEntry('r', { args: ['user-1'] });
    fg.tryEntry('r', { args: ['user-1'] });
    expect(fg.blocksByRule('r')).toEqual([
      { kind: 'flow', ruleId: 'flow#1', count: 1 },
      { kind: 'authority', ruleId: 'authority#0', count: 1 },
      { kind: 'hotParam', ruleId: 'hotParam#0', count: 2 },
    ]);
  });

  it('names circuit breakers by their position, as circuitState lists them', () => {
    const { fg } = engine();
    fg.loadCircuitBreakerRules([
      { resource: 'r', strategy: 'slowRequestRatio', threshold: 1, maxAllowedRtMs: 10_000, retryTimeoutMs: 1000 },
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const entry = fg.entry('r');
    entry.traceError(new Error('down'));
    entry.exit();
    fg.tryEntry('r');
    expect(fg.circuitState('r').map((s) => s.state)).toEqual(['closed', 'open']);
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'circuitBreaker', ruleId: 'circuitBreaker#1', count: 1 }]);
  });

  it('counts blocks in acquireCount units, as the resource totals do', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    fg.tryEntry('r', { acquireCount: 3 });
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'flow', ruleId: 'flow#0', count: 3 }]);
    expect(fg.totals('r')!.block).toBe(3);
  });

  it('keeps counting under the same id when unchanged rules are loaded again', () => {
    const { fg } = engine();
    const rules = [{ resource: 'r', threshold: 0 }];
    fg.loadFlowRules(rules);
    fg.tryEntry('r');
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    fg.tryEntry('r');
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'flow', ruleId: 'flow#0', count: 2 }]);
  });

  it('counts a rule under its new position once the rules are reordered', () => {
    const { fg } = engine();
    const strict = { resource: 'r', threshold: 0 };
    const loose = { resource: 'r', threshold: 100 };
    fg.loadFlowRules([strict, loose]);
    fg.tryEntry('r');
    fg.loadFlowRules([loose, strict]);
    fg.tryEntry('r');
    expect(fg.blocksByRule('r')).toEqual([
      { kind: 'flow', ruleId: 'flow#0', count: 1 },
      { kind: 'flow', ruleId: 'flow#1', count: 1 },
    ]);
  });

  it('keeps the counts of a resource whose rules were all removed', () => {
    const { fg } = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    fg.tryEntry('r');
    fg.loadFlowRules([]);
    fg.entry('r').exit();
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'flow', ruleId: 'flow#0', count: 1 }]);
  });

  it('counts rules declared in code like loaded ones, and a loaded set that replaces them from position 0', () => {
    const { fg } = engine();
    fg.declareRules({ flow: [{ resource: 'r', threshold: 0 }] });
    fg.tryEntry('r');
    fg.loadFlowRules([
      { resource: 'r', threshold: 100 },
      { resource: 'r', threshold: 0 },
    ]);
    fg.tryEntry('r');
    expect(fg.blocksByRule('r')).toEqual([
      { kind: 'flow', ruleId: 'flow#0', count: 1 },
      { kind: 'flow', ruleId: 'flow#1', count: 1 },
    ]);
  });

  it('never names a hotspot value, however many values are blocked', () => {
    const { fg } = engine();
    fg.loadHotParamRules([{ resource: 'r', paramKey: 'user', threshold: 0 }]);
    for (let i = 0; i < 1000; i++) fg.tryEntry('r', { params: { user: `user-${i}` } });
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'hotParam', ruleId: 'hotParam#0', count: 1000 }]);
  });

  it('answers [] for a tracked resource never blocked, and undefined for an unknown one', () => {
    const { fg } = engine();
    fg.entry('r').exit();
    expect(fg.blocksByRule('r')).toEqual([]);
    expect(fg.blocksByRule('nowhere')).toBeUndefined();
  });

  it('gives the block event the id the block is counted under', () => {
    const { fg } = engine();
    fg.loadFlowRules([
      { resource: 'r', threshold: 100 },
      { resource: 'r', threshold: 0 },
    ]);
    const events: BlockEvent[] = [];
    fg.on('block', (event) => events.push(event));
    fg.tryEntry('r');
    expect(events).toEqual([expect.objectContaining({ resource: 'r', ruleId: 'flow#1' })]);
  });

  it(
    'sums, over rules, to the resource block total whatever the traffic (property)',
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              origin: fc.constantFrom('', 'a', 'b', 'evil'),
              user: fc.constantFrom('u1', 'u2', 'u3'),
              acquireCount: fc.integer({ min: 0, max: 3 }),
              advanceMs: fc.integer({ min: 0, max: 700 }),
            }),
            { maxLength: 60 },
          ),
          (calls) => {
            const clock = new ManualClock();
            const fg = new Floodgate({ clock });
            fg.loadRules({
              authority: [{ resource: 'r', strategy: 'deny', origins: ['evil'] }],
              flow: [
                { resource: 'r', threshold: 5 },
                { resource: 'r', threshold: 2, limitOrigin: 'a' },
              ],
              hotParams: [{ resource: 'r', paramKey: 'user', threshold: 2 }],
            });
            for (const call of calls) {
              void clock.advance(call.advanceMs);
              const result = fg.tryEntry('r', {
                origin: call.origin,
                acquireCount: call.acquireCount,
                params: { user: call.user },
              });
              if (result instanceof Entry) result.exit();
            }
            const byRule = fg.blocksByRule('r') ?? [];
            const total = fg.totals('r')?.block ?? 0;
            expect(byRule.reduce((sum, b) => sum + b.count, 0)).toBe(total);
            for (const b of byRule) expect(['authority#0', 'flow#0', 'flow#1', 'hotParam#0']).toContain(b.ruleId);
          },
        ),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );
});

describe('ruleIdOf', () => {
  const rule = Object.freeze({ resource: 'r', threshold: 0 });
  const error = new FlowBlockError({ resource: 'r', rule: rule as never });

  it('finds a rule by identity first', () => {
    expect(ruleIdOf(error, () => [{ resource: 'r', threshold: 5 } as never, rule as never])).toBe('flow#1');
  });

  it('finds a rule kept from before a reload by its equal in force', () => {
    expect(ruleIdOf(error, () => [{ resource: 'r', threshold: 0 } as never])).toBe('flow#0');
  });

  it('names a rule no longer in force as retired', () => {
    expect(ruleIdOf(error, () => [])).toBe('flow#retired');
  });
});
