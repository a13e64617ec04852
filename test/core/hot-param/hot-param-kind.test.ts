import { Floodgate, ManualClock, type HotParamRuleOptions } from '@floodgate/core';
import type { HotParamChecker } from '../../../packages/core/src/hot-param/hot-param-checker';
import { hotParamKind } from '../../../packages/core/src/hot-param/hot-param-kind';
import { compileContext, normalizeRules } from '../rules';
import { arg, engineWith, isEntry, passesUntilBlocked } from './helpers';

/** One checker for one rule, compiled outside an engine, and entries to feed it. */
function compiled(rule: HotParamRuleOptions): {
  checker: HotParamChecker;
  check: (value: unknown) => boolean;
  refusedLater: (value: unknown) => void;
} {
  const [checker] = hotParamKind.compile(normalizeRules('hotParams', [rule]), compileContext()).checkers as HotParamChecker[];
  const source = new Floodgate({ clock: new ManualClock() });
  // As the engine does: a refused call gives back what its earlier values took.
  const check = (value: unknown): boolean => {
    const entry = source.entry('any', arg(value));
    const passed = checker!.check(entry, 0, false) === undefined;
    if (!passed) entry.refused(0);
    return passed;
  };
  // A call the rule passes and a later check refuses.
  const refusedLater = (value: unknown): void => {
    const entry = source.entry('any', arg(value));
    expect(checker!.check(entry, 0, false)).toBeUndefined();
    entry.refused(0);
  };
  return { checker: checker!, check, refusedLater };
}

describe('hotParamKind.compile', () => {
  it('keeps each value’s state when the same rules are loaded again', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('keeps each value’s state when the specific items are given in another order', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2, specificItems: { b: 1, a: 3 } }]);
    passesUntilBlocked(fg, 'r', arg('x'));
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 2, specificItems: { a: 3, b: 1 } }]);
    expect(isEntry(fg.tryEntry('r', arg('x')))).toBe(false);
  });

  it('keeps the counters of calls in flight across a reload', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, metric: 'concurrency', threshold: 1 }]);
    const held = fg.entry('r', arg('a'));
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, metric: 'concurrency', threshold: 1 }]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    held.exit();
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
  });

  it('keeps hotspot state when only other kinds of rules are reloaded', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    fg.loadFlowRules([{ resource: 'r', threshold: 100 }]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('starts a changed rule afresh', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    passesUntilBlocked(fg, 'r', arg('a'));
    fg.loadHotParamRules([{ resource: 'r', paramIndex: 0, threshold: 3 }]);
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(3);
  });

  it('makes one checker per rule, in rule order', () => {
    const rules = normalizeRules('hotParams', [
      { resource: 'r', paramIndex: 0, threshold: 1 },
      { resource: 'r', paramIndex: 1, threshold: 1, behavior: 'throttle' },
      { resource: 'r', paramIndex: 2, threshold: 1, metric: 'concurrency' },
    ]);
    expect((hotParamKind.compile(rules, compileContext()).checkers as HotParamChecker[]).map((checker) => checker.rule)).toEqual(rules);
  });

  it.each([
    ['reject', { metric: 'qps', behavior: 'reject' }],
    ['throttle', { metric: 'qps', behavior: 'throttle' }],
    ['concurrency', { metric: 'concurrency' }],
  ] as const)('never tracks more values than capacity (%s)', (_name, mode) => {
    const { checker, check } = compiled({ resource: 'r', paramIndex: 0, threshold: 1, capacity: 100, ...mode });
    let most = 0;
    for (let i = 0; i < 1_000; i++) {
      check(`v${i}`);
      most = Math.max(most, checker.trackedCount());
    }
    expect(most).toBe(100);
  });

  it('forgets the least recently used value first, which then starts afresh', () => {
    const { checker, check } = compiled({ resource: 'r', paramIndex: 0, threshold: 1, capacity: 2 });
    check('a');
    check('b');
    expect(check('a')).toBe(false);
    check('c');
    expect(check('a')).toBe(false);
    expect(check('b')).toBe(true);
    expect(checker.trackedCount()).toBe(2);
  });

  it.each([
    ['reject', { metric: 'qps', behavior: 'reject' }],
    ['throttle', { metric: 'qps', behavior: 'throttle' }],
    ['concurrency', { metric: 'concurrency' }],
  ] as const)('tracks no state for a value that is always refused (%s)', (_name, mode) => {
    const { checker, check } = compiled({ resource: 'r', paramIndex: 0, threshold: 1, specificItems: { abuser: 0 }, ...mode });
    expect(check('abuser')).toBe(false);
    expect(checker.trackedCount()).toBe(0);
  });

  it('forgets the new values of a refused array value', () => {
    const { checker, check } = compiled({ resource: 'r', paramIndex: 0, threshold: 1 });
    check('b');
    expect(check(['a', 'c', 'b'])).toBe(false);
    expect(checker.trackedCount()).toBe(1);
  });

  it.each(['reject', 'throttle'] as const)(
    'keeps, with its share given back, a new value a later check refuses while it is the only one tracked (%s)',
    (behavior) => {
      // lru-cache clears all its slots to delete its last entry: O(capacity) per refused call.
      const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 1, behavior, capacity: 200_000 }]);
      fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
      for (let i = 0; i < 3; i++) expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
      fg.loadFlowRules([]);
      expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(1);
    },
  );

  it.each(['reject', 'throttle'] as const)(
    'keeps tracking a new value a later check refuses while it is the only one tracked, so the LRU is never cleared whole (%s)',
    (behavior) => {
      const { checker, refusedLater } = compiled({ resource: 'r', paramIndex: 0, threshold: 1, behavior });
      refusedLater('a');
      expect(checker.trackedCount()).toBe(1);
    },
  );

  it.each(['reject', 'throttle'] as const)('still forgets a new value a later check refuses when others are tracked (%s)', (behavior) => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 1, capacity: 2, behavior }]);
    fg.tryEntry('r', arg('kept'));
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    for (const value of ['x', 'y', 'z']) fg.tryEntry('r', arg(value));
    fg.loadFlowRules([]);
    // 'kept' was never evicted by the refused values: it is still out of tokens.
    expect(isEntry(fg.tryEntry('r', arg('kept')))).toBe(false);
  });

  it.each(['reject', 'throttle'] as const)(
    'leaves alone a value seen again after eviction when an older call that first saw it is cancelled (%s)',
    (behavior) => {
      const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 1, capacity: 2, behavior }]);
      const held = fg.entry('r', arg('a'));
      fg.entry('r', arg('b')).exit();
      fg.entry('r', arg('c')).exit();
      fg.entry('r', arg('a')).exit();
      held.cancel();
      expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    },
  );

  it('gives back the tokens of a cancelled first call on a value that later calls used, without forgetting the value', () => {
    const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 2 }]);
    fg.entry('r', arg('other')).exit();
    const held = fg.entry('r', arg('a'));
    fg.entry('r', arg('a')).exit();
    held.cancel();
    expect(passesUntilBlocked(fg, 'r', arg('a'))).toBe(1);
  });
});
