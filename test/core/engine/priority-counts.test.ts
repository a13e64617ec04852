import { Floodgate, type Priority } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { MetricsReader, type BlockEvent, type PassEvent } from '@floodgate/core/metrics';
import { PRIORITIES } from '@floodgate/core/http';
import fc from 'fast-check';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

const zero = (): Record<Priority, number> => ({ critical: 0, default: 0, sheddable: 0 });

describe('passes and blocks by priority', () => {
  it('counts partitioned concurrency shedding sheddable calls while critical ones pass', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadFlowRules([
      { resource: 'search', metric: 'concurrency', threshold: 4, partitions: { critical: 0.5, sheddable: 0.5 } },
    ]);
    // Both priorities ask; sheddable fills its share of 2, then is refused; critical keeps its 2.
    fg.entry('search', { priority: 'critical' });
    for (let i = 0; i < 5; i++) fg.tryEntry('search', { priority: 'sheddable' });
    fg.entry('search', { priority: 'critical' });
    expect(fg.priorityCounts('search')).toEqual({
      passed: { critical: 2, default: 0, sheddable: 2 },
      blocked: { critical: 0, default: 0, sheddable: 3 },
    });
  });

  it('is undefined for an untracked resource, and all zeros for a tracked one without calls', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    expect(fg.priorityCounts('nobody')).toBeUndefined();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    fg.tryEntry('r', { priority: 'critical', acquireCount: 0 });
    expect(fg.priorityCounts('r')).toEqual({ passed: zero(), blocked: zero() });
  });

  it('gives pass and block events the call priority', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    const seen: (PassEvent | BlockEvent)[] = [];
    fg.on('pass', (e) => seen.push(e));
    fg.on('block', (e) => seen.push(e));
    fg.tryEntry('r', { priority: 'critical' });
    fg.tryEntry('r', { priority: 'sheddable' });
    fg.tryEntry('r');
    expect(seen.map((e) => e.priority)).toEqual(['critical', 'sheddable', 'default']);
  });

  it('the metrics reader gives them per resource and sums the resources past its cap', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadAuthorityRules([
      { resource: 'a', strategy: 'deny', origins: ['evil'] },
      { resource: 'b', strategy: 'deny', origins: ['evil'] },
      { resource: 'c', strategy: 'deny', origins: ['evil'] },
    ]);
    const reader = new MetricsReader(fg, { maxResources: 1 });
    for (const r of ['a', 'b', 'c']) {
      fg.tryEntry(r, { priority: 'sheddable', origin: 'evil' });
      fg.entry(r, { priority: 'critical' }).exit();
    }
    const byResource = new Map(reader.read().resources.map((r) => [r.resource, r.byPriority]));
    expect(byResource.get('a')).toEqual({
      passed: { critical: 1, default: 0, sheddable: 0 },
      blocked: { critical: 0, default: 0, sheddable: 1 },
    });
    expect(byResource.get('other')).toEqual({
      passed: { critical: 2, default: 0, sheddable: 0 },
      blocked: { critical: 0, default: 0, sheddable: 2 },
    });
    reader.close();
  });

  it(
    'for any calls, each priority count is the number of that priority passed or blocked, and they sum to the totals',
    async () => {
      const call = fc.record({
        priority: fc.option(fc.constantFrom(...PRIORITIES), { nil: undefined }),
        refused: fc.boolean(),
        acquireCount: fc.integer({ min: 0, max: 3 }),
        how: fc.constantFrom('tryEntry', 'entry', 'enter', 'run'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(call, { maxLength: 40 }), async (calls) => {
          const fg = new Floodgate({ clock: new ManualClock() });
          fg.loadAuthorityRules([{ resource: 'r', strategy: 'deny', origins: ['evil'] }]);
          const passed = zero();
          const blocked = zero();
          for (const c of calls) {
            const options = { priority: c.priority, acquireCount: c.acquireCount, origin: c.refused ? 'evil' : 'app' };
            const counted = c.refused ? blocked : passed;
            counted[c.priority ?? 'default'] += c.acquireCount;
            if (c.how === 'tryEntry') {
              const entry = fg.tryEntry('r', options);
              if (!c.refused) (entry as { exit(): void }).exit();
            } else if (c.how === 'entry') {
              try {
                fg.entry('r', options).exit();
              } catch {
                // refused: counted above
              }
            } else if (c.how === 'enter') {
              await fg.enter('r', options).then(
                (entry) => entry.exit(),
                () => undefined,
              );
            } else {
              await fg.run('r', async () => 'ok', options).catch(() => undefined);
            }
          }
          const counts = fg.priorityCounts('r')!;
          expect(counts).toEqual({ passed, blocked });
          const totals = fg.totals('r')!;
          const sum = (byPriority: Readonly<Record<Priority, number>>): number =>
            PRIORITIES.reduce((s, p) => s + byPriority[p], 0);
          expect(sum(counts.passed)).toBe(totals.pass);
          expect(sum(counts.blocked)).toBe(totals.block);
        }),
        propertyRuns(200),
      );
    },
    propertyTimeoutMs(200),
  );
});
