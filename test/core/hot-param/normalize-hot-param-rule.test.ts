import { Floodgate, RuleValidationError } from '@floodgate/core';
import type { HotParamRuleOptions } from '@floodgate/core/rules';
import { HOT_PARAM_RULE_DEFAULTS } from '../../../packages/core/src/hot-param/hot-param-rule';
import { normalizeRules } from '../rules';
import { arg, engineWith, isEntry } from './helpers';

/** The issues `loadHotParamRules` reports for `rules`, as `path: message` lines. */
function issuesOf(rules: unknown[]): string[] {
  try {
    normalizeRules('hotParams', rules);
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return (error as RuleValidationError).issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('no RuleValidationError');
}

const base = { resource: 'r', paramIndex: 0, threshold: 5 } as const;

describe('normalizeHotParamRule', () => {
  it('resolves every default', () => {
    expect(normalizeRules('hotParams', [base])).toEqual([
      {
        resource: 'r',
        paramIndex: 0,
        metric: 'qps',
        threshold: 5,
        behavior: 'reject',
        durationMs: 1000,
        burstCount: 0,
        maxQueueingTimeMs: 0,
        capacity: 4000,
        specificItems: {},
      },
    ]);
  });

  it('keeps a paramKey rule without a paramIndex', () => {
    const [rule] = normalizeRules('hotParams', [{ resource: 'r', paramKey: 'userId', threshold: 1 }]);
    expect(rule).toMatchObject({ paramKey: 'userId' });
    expect(rule).not.toHaveProperty('paramIndex');
  });

  it.each([
    [1000, 4000],
    [1500, 8000],
    [200, 4000],
    [0.5, 4000],
    [10_000, 40_000],
    [60_000, 200_000],
  ])('sizes a qps rule of %s ms for %s values by default', (durationMs, capacity) => {
    expect(normalizeRules('hotParams', [{ ...base, durationMs }])[0]!.capacity).toBe(capacity);
  });

  it.each([5e-324, 1e-310])(
    'sizes a qps rule of %s ms for 4000 values, and compiles it: the duration in seconds underflowed to a capacity of 0 (#24)',
    (durationMs) => {
      expect(normalizeRules('hotParams', [{ ...base, durationMs }])[0]!.capacity).toBe(4000);
      const fg = new Floodgate();
      fg.loadHotParamRules([{ ...base, durationMs }]);
      expect(() => fg.entry(base.resource, { args: ['u1'] }).exit()).not.toThrow();
    },
  );

  it('sizes a concurrency rule for 4000 values by default', () => {
    expect(normalizeRules('hotParams', [{ ...base, metric: 'concurrency', durationMs: 60_000 }])[0]!.capacity).toBe(
      HOT_PARAM_RULE_DEFAULTS.concurrencyCapacity,
    );
  });

  it('takes the given capacity', () => {
    expect(normalizeRules('hotParams', [{ ...base, capacity: 10 }])[0]!.capacity).toBe(10);
  });

  it('copies and freezes specificItems, leaving the caller’s object alone', () => {
    const items: Record<string, number> = { vip: 10 };
    const [rule] = normalizeRules('hotParams', [{ ...base, specificItems: items }]);
    expect(rule!.specificItems).toEqual({ vip: 10 });
    expect(rule!.specificItems).not.toBe(items);
    expect(Object.isFrozen(rule!.specificItems)).toBe(true);
    expect(Object.isFrozen(items)).toBe(false);
  });

  it('keeps specificItems in key order whatever order they were given in, so a reordered rule is the same rule', () => {
    const keys = ['d', 'a', 'c', 'b', 'e'];
    for (let shift = 0; shift < keys.length; shift++) {
      for (const order of [keys, [...keys].reverse()]) {
        const given = [...order.slice(shift), ...order.slice(0, shift)];
        const [rule] = normalizeRules('hotParams', [
          { ...base, specificItems: Object.fromEntries(given.map((key, i) => [key, i])) },
        ]);
        expect(Object.keys(rule!.specificItems)).toEqual(['a', 'b', 'c', 'd', 'e']);
      }
    }
  });

  it('keeps a "__proto__" item as an item', () => {
    const [rule] = normalizeRules('hotParams', [{ ...base, specificItems: JSON.parse('{"__proto__": 3}') }]);
    expect(Object.keys(rule!.specificItems)).toEqual(['__proto__']);
  });

  it('resolves the cluster settings of a qps rule', () => {
    const [rule] = normalizeRules('hotParams', [{ ...base, cluster: {} }]);
    expect(rule!.cluster).toMatchObject({ thresholdType: 'global', fallbackToLocal: true });
  });

  it('limits a cluster rule locally as its local rule', () => {
    const { fg } = engineWith([{ ...base, threshold: 2, cluster: { thresholdType: 'global' } }]);
    fg.entry('r', arg('a'));
    fg.entry('r', arg('a'));
    expect(isEntry(fg.tryEntry('r', arg('a')))).toBe(false);
  });

  it('refuses a rule with neither paramIndex nor paramKey', () => {
    expect(issuesOf([{ resource: 'r', threshold: 1 }])).toEqual([
      'hotParams[0]: needs exactly one of paramIndex, paramKey and key, got none',
    ]);
  });

  it('refuses a rule with both paramIndex and paramKey', () => {
    expect(issuesOf([{ ...base, paramKey: 'id' }])).toEqual([
      'hotParams[0]: needs exactly one of paramIndex, paramKey and key, got paramIndex and paramKey',
    ]);
  });

  it('refuses a non-integer paramIndex and an empty paramKey', () => {
    expect(
      issuesOf([
        { ...base, paramIndex: 1.5 },
        { resource: 'r', paramKey: '', threshold: 1 },
      ]),
    ).toEqual([
      'hotParams[0].paramIndex: must be a safe integer, got 1.5',
      'hotParams[1].paramKey: must be a non-empty string, got ""',
    ]);
  });

  it('refuses negative or fractional counts', () => {
    expect(
      issuesOf([
        { ...base, threshold: -1, burstCount: -2 },
        { ...base, threshold: 2.5 },
      ]),
    ).toEqual([
      'hotParams[0].threshold: must be a safe integer >= 0, got -1',
      'hotParams[0].burstCount: must be a safe integer >= 0, got -2',
      'hotParams[1].threshold: must be a safe integer >= 0, got 2.5',
    ]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(
      issuesOf([
        { ...base, capacity: 0 },
        { ...base, capacity: 2.5 },
        { ...base, capacity: -3 },
        { ...base, capacity: 1e9 },
      ]),
    ).toEqual([
      'hotParams[0].capacity: must be a safe integer within [1, 10000000], got 0',
      'hotParams[1].capacity: must be a safe integer within [1, 10000000], got 2.5',
      'hotParams[2].capacity: must be a safe integer within [1, 10000000], got -3',
      'hotParams[3].capacity: must be a safe integer within [1, 10000000], got 1000000000',
    ]);
  });

  it('refuses a duration that is not positive and a negative queueing time', () => {
    expect(
      issuesOf([
        { ...base, durationMs: 0, maxQueueingTimeMs: -1 },
        { ...base, durationMs: -1000 },
      ]),
    ).toEqual([
      'hotParams[0].durationMs: must be a finite number > 0 and <= 9007199254740991, got 0',
      'hotParams[0].maxQueueingTimeMs: must be a finite number within [0, 2147483647], got -1',
      'hotParams[1].durationMs: must be a finite number > 0 and <= 9007199254740991, got -1000',
    ]);
  });

  it('refuses a queueing time no timer can hold; a window length is no timer, so it may be longer (#12)', () => {
    expect(issuesOf([{ ...base, behavior: 'throttle', durationMs: 1e11, maxQueueingTimeMs: 1e11 }])).toEqual([
      'hotParams[0].maxQueueingTimeMs: must be a finite number within [0, 2147483647], got 100000000000',
    ]);
  });

  it('refuses throttle with concurrency', () => {
    expect(issuesOf([{ ...base, metric: 'concurrency', behavior: 'throttle' }])).toEqual([
      "hotParams[0].behavior: must be 'reject' for a concurrency rule, got 'throttle'",
    ]);
  });

  it('refuses unknown metrics, behaviors and fields', () => {
    expect(issuesOf([{ ...base, metric: 'rps', behavior: 'warmUp', count: 5 }])).toEqual([
      expect.stringMatching(/^hotParams\[0\]\.count: unknown field \(allowed: resource, paramIndex, paramKey, /),
      "hotParams[0].metric: must be one of 'qps', 'concurrency', got \"rps\"",
      "hotParams[0].behavior: must be one of 'reject', 'throttle', got \"warmUp\"",
    ]);
  });

  it('refuses non-numeric or negative specific thresholds, by path', () => {
    expect(issuesOf([{ ...base, specificItems: { vip: 'many', abuser: -1, '10.0.0.1': 1.5, ok: 3 } }])).toEqual([
      'hotParams[0].specificItems.vip: must be a safe integer >= 0, got "many"',
      'hotParams[0].specificItems.abuser: must be a safe integer >= 0, got -1',
      'hotParams[0].specificItems["10.0.0.1"]: must be a safe integer >= 0, got 1.5',
    ]);
  });

  it('quotes an item key that is not an identifier in the issue path', () => {
    expect(issuesOf([{ ...base, specificItems: { 'eu-west': -1, '1st': -1, _ok$2: -1 } }])).toEqual([
      'hotParams[0].specificItems["eu-west"]: must be a safe integer >= 0, got -1',
      'hotParams[0].specificItems["1st"]: must be a safe integer >= 0, got -1',
      'hotParams[0].specificItems._ok$2: must be a safe integer >= 0, got -1',
    ]);
  });

  it('refuses specificItems that are not an object', () => {
    expect(issuesOf([{ ...base, specificItems: [['vip', 3]] }])).toEqual([
      'hotParams[0].specificItems: must be an object, got an array [["vip",3]]',
    ]);
  });

  it('refuses a bucket larger than a safe integer', () => {
    const max = Number.MAX_SAFE_INTEGER;
    expect(
      issuesOf([{ ...base, threshold: max, burstCount: 1, specificItems: { vip: max - 1 }, behavior: 'reject' }]),
    ).toEqual([
      'hotParams[0].threshold: threshold + burstCount must be at most 9007199254740991, got 9007199254740992',
    ]);
    expect(issuesOf([{ ...base, threshold: 1, burstCount: 2, specificItems: { vip: max } }])).toEqual([
      `hotParams[0].specificItems.vip: item + burstCount must be at most 9007199254740991, got ${max + 2}`,
    ]);
  });

  it('refuses cluster settings on a concurrency rule', () => {
    expect(issuesOf([{ ...base, metric: 'concurrency', cluster: { thresholdType: 'global' } }])).toEqual([
      "hotParams[0].cluster: cluster mode applies to qps rules only, got metric 'concurrency'",
    ]);
  });

  it('lists every problem of every rule in one error and keeps the rules in force', () => {
    const fg = new Floodgate();
    fg.loadHotParamRules([base]);
    const bad = [
      { resource: '', threshold: -1 },
      { ...base, capacity: 0 },
    ] as unknown as HotParamRuleOptions[];
    expect(() => fg.loadHotParamRules(bad)).toThrow(RuleValidationError);
    try {
      fg.loadHotParamRules(bad);
    } catch (error) {
      expect((error as RuleValidationError).issues.map((issue) => issue.path)).toEqual([
        'hotParams[0].resource',
        'hotParams[0]',
        'hotParams[0].threshold',
        'hotParams[1].capacity',
      ]);
    }
    expect(fg.getRules().hotParams).toEqual(normalizeRules('hotParams', [base]));
  });
});
