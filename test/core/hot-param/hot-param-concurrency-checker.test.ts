import { Floodgate, type Entry } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { arg, engineWith, isEntry } from './helpers';

const concurrency = { resource: 'r', paramIndex: 0, metric: 'concurrency' } as const;

describe('hotspot concurrency (calls in flight per value)', () => {
  it('admits threshold calls in flight per value', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 2 }]);
    fg.entry('r', arg('a'));
    fg.entry('r', arg('a'));
    expect(fg.tryEntry('r', arg('a'))).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'a',
      retryAfterMs: undefined,
    });
  });

  it('frees a place when a call exits, and only once when it exits twice', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 2 }]);
    const first = fg.entry('r', arg('a'));
    fg.entry('r', arg('a'));
    first.exit();
    first.exit();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('counts each value on its own', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1 }]);
    fg.entry('r', arg('a'));
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('counts a call once whatever its acquireCount', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 2 }]);
    expect(isEntry(fg.tryEntry('r', { args: ['a'], acquireCount: 5 }))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('gives specific items their own limit, and refuses an item of 0 always', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1, specificItems: { vip: 3, abuser: 0 } }]);
    for (let i = 0; i < 3; i++) expect(isEntry(fg.tryEntry('r', arg('vip')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('vip')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('other')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('other')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('abuser')))).toBe(false);
  });

  it('releases the place when a later check refuses the call', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadRules({ hotParams: [{ ...concurrency, threshold: 1 }], flow: [{ resource: 'r', threshold: 1 }] });
    fg.entry('r', arg('a')).exit();
    expect(fg.tryEntry('r', arg('a'))).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await clock.advance(1_000);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('holds one place per element of an array value and releases them all on exit', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1 }]);
    const both = fg.entry('r', arg(['a', 'b']));
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(false);
    both.exit();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('b')))).toBe(true);
  });

  it('releases the places of the earlier elements when a later element is refused', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1 }]);
    fg.entry('r', arg('b'));
    expect(isEntry(fg.tryEntry('r', arg(['a', 'b'])))).toBe(false);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('starts an evicted value afresh', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1, capacity: 1 }]);
    fg.entry('r', arg('a'));
    fg.entry('r', arg('b'));
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('releases the counter a call took, not the fresh one, when it exits after its value was evicted', () => {
    const { fg } = engineWith([{ ...concurrency, threshold: 1, capacity: 1 }]);
    const old: Entry = fg.entry('r', arg('a'));
    fg.entry('r', arg('b'));
    fg.entry('r', arg('a'));
    old.exit();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });
});
