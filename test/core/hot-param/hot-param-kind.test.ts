import { ErrorCodes, Floodgate } from '@floodgate/core';
import type { HotParamRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import type { ClusterBackend, ClusterLimiter } from '@floodgate/core/cluster';
import type { HotParamChecker } from '../../../packages/core/src/hot-param/hot-param-checker';
import { hotParamKind } from '../../../packages/core/src/hot-param/hot-param-kind';
import { clustered, type StoreHealth } from '../cluster/memory-cluster-backend';
import { compileContext, normalizeRules } from '../rules';
import { arg, engineWith, isEntry, passesUntilBlocked } from './helpers';

/** One checker for one rule, compiled outside an engine, and entries to feed it. */
function compiled(rule: HotParamRuleOptions): {
  checker: HotParamChecker;
  check: (value: unknown) => boolean;
  refusedLater: (value: unknown) => void;
} {
  const [checker] = hotParamKind.compile(normalizeRules('hotParams', [rule]), compileContext())
    .checkers as HotParamChecker[];
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
    expect(
      (hotParamKind.compile(rules, compileContext()).checkers as HotParamChecker[]).map((checker) => checker.rule),
    ).toEqual(rules);
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
    const { checker, check } = compiled({
      resource: 'r',
      paramIndex: 0,
      threshold: 1,
      specificItems: { abuser: 0 },
      ...mode,
    });
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

  it.each(['reject', 'throttle'] as const)(
    'still forgets a new value a later check refuses when others are tracked (%s)',
    (behavior) => {
      const { fg } = engineWith([{ resource: 'r', paramIndex: 0, threshold: 1, capacity: 2, behavior }]);
      fg.tryEntry('r', arg('kept'));
      fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
      for (const value of ['x', 'y', 'z']) fg.tryEntry('r', arg(value));
      fg.loadFlowRules([]);
      // 'kept' was never evicted by the refused values: it is still out of tokens.
      expect(isEntry(fg.tryEntry('r', arg('kept')))).toBe(false);
    },
  );

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

describe('hotParamKind: what adapters and the engine read', () => {
  it('tells adapters which params keys its rules read, each once (resourceInfo().paramKeys)', () => {
    const { fg } = engineWith([
      { resource: 'r', paramKey: 'userId', threshold: 1 },
      { resource: 'r', paramIndex: 0, threshold: 1 },
      { resource: 'r', paramKey: 'userId', threshold: 5, metric: 'concurrency' },
      { resource: 'r', paramKey: 'ip', threshold: 1 },
      { resource: 'byIndex', paramIndex: 0, threshold: 1 },
    ]);
    expect(fg.resourceInfo('r').paramKeys).toEqual(['userId', 'ip']);
    expect(fg.resourceInfo('byIndex').paramKeys).toEqual([]);
  });

  it('describes its block code in ErrorCodes', () => {
    expect(ErrorCodes.ERR_HOT_PARAM_BLOCKED).toBe('A hotspot parameter rule blocked the call for one parameter value.');
  });
});

describe('hotspot cluster rules (hotParamKind.cluster)', () => {
  /** The engine of `clustered()` with these hotspot rules. */
  const withRules = (rules: HotParamRuleOptions[], health?: StoreHealth, withoutAcquireEach?: boolean) =>
    clustered({ hotParams: rules }, health, withoutAcquireEach);

  const shared = { resource: 'r', paramIndex: 0, threshold: 1, cluster: {} } as const;

  it('names each rule in the store by its resource, behavior and parameter, and asks for a token bucket or pacing', () => {
    const { backend } = withRules([
      { resource: 'r', paramIndex: 1, threshold: 5, burstCount: 2, cluster: {} },
      {
        resource: 'r',
        paramKey: 'userId',
        behavior: 'throttle',
        threshold: 4,
        durationMs: 2_000,
        maxQueueingTimeMs: 100,
        cluster: {},
      },
    ]);
    expect([...backend.limiters.values()].map((limiter) => limiter.spec)).toEqual([
      {
        kind: 'tokenBucket',
        key: 'hotParam|r|reject|index:1#0',
        threshold: 5,
        thresholdType: 'global',
        durationMs: 1_000,
        burstCount: 2,
      },
      {
        kind: 'pace',
        key: 'hotParam|r|throttle|key:userId#0',
        threshold: 4,
        thresholdType: 'global',
        durationMs: 2_000,
        maxQueueingTimeMs: 100,
      },
    ]);
  });

  it('decides a sync entry() by the local rule, never from leased tokens', () => {
    let leased = 0;
    const limiter: ClusterLimiter = {
      acquire: () => Promise.resolve({ status: 'pass' }),
      tryAcquireLeased: () => {
        leased++;
        return false;
      },
    };
    const backend: ClusterBackend = { name: 'leasing', limiter: () => limiter };
    const fg = new Floodgate({ clock: new ManualClock(), cluster: backend });
    fg.loadHotParamRules([shared]);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(true);
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
    expect(leased).toBe(0);
  });

  it('asks the store with the threshold of the value’s specific item', async () => {
    const { fg } = withRules([{ ...shared, specificItems: { vip: 3 } }]);
    for (let i = 0; i < 3; i++) (await fg.enter('r', arg('vip'))).exit();
    await expect(fg.enter('r', arg('vip'))).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it('names the value in the error of a call the store refused', async () => {
    const { fg, fallbacks } = withRules([shared]);
    (await fg.enter('r', arg('a'))).exit();
    await expect(fg.enter('r', arg('a'))).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', value: 'a' });
    expect(fallbacks).toEqual([]);
  });

  it('asks a limiter without acquireEach for a single value', async () => {
    const { fg, fallbacks } = withRules([shared], 'up', true);
    (await fg.enter('r', arg('a'))).exit();
    await expect(fg.enter('r', arg('a'))).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED', value: 'a' });
    expect(fallbacks).toEqual([]);
  });

  it('asks the store only for the elements of an array value that hotspot rules limit', async () => {
    const { fg, backend } = withRules([shared]);
    (await fg.enter('r', arg([null, { id: 1 }, 'a', undefined]))).exit();
    (await fg.enter('r', arg([{ id: 1 }, 'b', null]))).exit();
    const [limiter] = backend.limiters.values();
    expect(limiter!.scopes()).toEqual(['a', 'b']);
  });

  it('does not ask the store for an array value without a limited element', async () => {
    const { fg, fallbacks } = withRules([shared], 'error');
    (await fg.enter('r', arg([null, { id: 1 }]))).exit();
    (await fg.enter('r', arg([]))).exit();
    expect(fallbacks).toEqual([]);
  });
});
