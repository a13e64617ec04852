import { Entry, Floodgate, FlowBlockError } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { MAX_OTHER_ORIGINS } from '../../../packages/core/src/engine/resource-state';

function engineWith(rules: FlowRuleOptions[]): Floodgate {
  const fg = new Floodgate({ clock: new ManualClock() });
  fg.loadFlowRules(rules);
  return fg;
}

/** Calls `r` once from each of `count` distinct origins, exiting at once. */
function rotateOrigins(fg: Floodgate, count: number, prefix = 'rotating'): void {
  for (let i = 0; i < count; i++) {
    const entry = fg.tryEntry('r', { origin: `${prefix}-${i}` });
    if (entry instanceof Entry) entry.exit();
  }
}

describe('per-origin statistics', () => {
  it('keeps none for an origin that no rule names, when no rule limits other origins (#12)', () => {
    const fg = engineWith([{ resource: 'r', threshold: 5, limitOrigin: 'app' }]);
    expect(fg.entry('r', { origin: 'app' }).originNode).toBeDefined();
    expect(fg.entry('r', { origin: 'someone' }).originNode).toBeUndefined();
  });

  it('keeps none at all while no rule reads origins', () => {
    const fg = engineWith([{ resource: 'r', threshold: 5 }]);
    expect(fg.entry('r', { origin: 'app' }).originNode).toBeUndefined();
  });

  it('keeps no minute window on an origin’s node, only what checks read (#12)', () => {
    const fg = engineWith([{ resource: 'r', threshold: 5, limitOrigin: 'app' }]);
    const node = fg.entry('r', { origin: 'app' }).originNode!;
    expect(node.minute.sampleCount).toBe(2);
    expect(node.readTotals().pass).toBe(0);
  });

  it('never evicts a named origin’s window, however many other origins call (#12)', () => {
    const fg = engineWith([
      { resource: 'r', threshold: 3, limitOrigin: 'app' },
      { resource: 'r', threshold: 1000, limitOrigin: 'other' },
    ]);
    for (let i = 0; i < 3; i++) fg.entry('r', { origin: 'app' }).exit();
    rotateOrigins(fg, 5 * MAX_OTHER_ORIGINS);
    expect(fg.tryEntry('r', { origin: 'app' })).toBeInstanceOf(FlowBlockError);
  });

  it('never evicts a named origin’s calls in flight, however many other origins call (#12)', () => {
    const fg = engineWith([
      { resource: 'r', metric: 'concurrency', threshold: 1, limitOrigin: 'app' },
      { resource: 'r', metric: 'concurrency', threshold: 1, limitOrigin: 'other' },
    ]);
    const held = fg.entry('r', { origin: 'app' });
    rotateOrigins(fg, 5 * MAX_OTHER_ORIGINS);
    expect(fg.tryEntry('r', { origin: 'app' })).toBeInstanceOf(FlowBlockError);
    held.exit();
    expect(fg.tryEntry('r', { origin: 'app' })).toBeInstanceOf(Entry);
  });

  it('counts at most MAX_OTHER_ORIGINS other origins, forgetting the least recently seen first', () => {
    const fg = engineWith([{ resource: 'r', threshold: 1, limitOrigin: 'other' }]);
    fg.entry('r', { origin: 'first' }).exit();
    expect(fg.tryEntry('r', { origin: 'first' })).toBeInstanceOf(FlowBlockError);
    rotateOrigins(fg, MAX_OTHER_ORIGINS - 1);
    expect(fg.tryEntry('r', { origin: 'first' })).toBeInstanceOf(FlowBlockError);
    rotateOrigins(fg, MAX_OTHER_ORIGINS, 'more');
    expect(fg.tryEntry('r', { origin: 'first' })).toBeInstanceOf(Entry);
  });

  it('releases the calls in flight of an evicted origin on the node they were counted on', () => {
    const fg = engineWith([{ resource: 'r', metric: 'concurrency', threshold: 1, limitOrigin: 'other' }]);
    const held = fg.entry('r', { origin: 'first' });
    const node = held.originNode!;
    rotateOrigins(fg, MAX_OTHER_ORIGINS);
    held.exit();
    expect(node.concurrency).toBe(0);
    expect(fg.stats('r')!.concurrency).toBe(0);
  });
});

describe('per-origin statistics of long origins', () => {
  it('keeps an other origin under a key of at most 128 characters (#12)', () => {
    const fg = engineWith([{ resource: 'r', threshold: 1, limitOrigin: 'other' }]);
    const long = 'o'.repeat(16_000);
    fg.entry('r', { origin: `${long}1` }).exit();
    expect(fg.tryEntry('r', { origin: `${long}1` })).toBeInstanceOf(FlowBlockError);
    expect(fg.tryEntry('r', { origin: `${long}2` })).toBeInstanceOf(Entry);
    const state = (
      fg as unknown as { resources: Map<string, { others: { keys(): IterableIterator<string> } }> }
    ).resources.get('r')!;
    expect([...state.others.keys()].every((key) => key.length <= 128)).toBe(true);
  });
});
