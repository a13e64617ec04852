import { Floodgate, RuleValidationError } from '@floodgate/core';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';

function issuesOf(load: () => void): Array<{ path: string; message: string }> {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    expect(error).toMatchObject({ code: 'ERR_INVALID_RULE' });
    return [...(error as RuleValidationError).issues];
  }
  throw new Error('expected a RuleValidationError');
}

describe('flow rule validation', () => {
  it('resolves every default', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([
      { resource: 'a', threshold: 5 },
      { resource: 'b', threshold: 5, behavior: 'warmUpThrottle', warmUpPeriodMs: 1000 },
    ]);
    expect(fg.getRules().flow).toEqual([
      { resource: 'a', metric: 'qps', threshold: 5, behavior: 'reject', strategy: 'direct', limitOrigin: 'default' },
      {
        resource: 'b',
        metric: 'qps',
        threshold: 5,
        behavior: 'warmUpThrottle',
        warmUpPeriodMs: 1000,
        coldFactor: 3,
        maxQueueingTimeMs: 500,
        strategy: 'direct',
        limitOrigin: 'default',
      },
    ]);
  });

  it('lists every problem by path and value', () => {
    const issues = issuesOf(() =>
      new Floodgate().loadFlowRules([
        { resource: 'ok', threshold: 1 },
        { resource: '', threshold: -1 },
        { resource: 'x', threshold: Number.POSITIVE_INFINITY, metric: 'rps' as never, behavior: 'drop' as never },
        { resource: 'y', threshold: 1, strategy: 'relate' },
        { resource: 'z', threshold: 1, behavior: 'warmUp' },
        { resource: 'w', threshold: 1, behavior: 'warmUp', warmUpPeriodMs: 0, coldFactor: 1 },
        { resource: 'c', metric: 'concurrency', threshold: 1, behavior: 'throttle' },
        { resource: 'q', threshold: '5' as never, maxQueueingTimeMs: -5, treshold: 3 } as never,
      ]),
    );
    expect(issues).toEqual([
      { path: 'flow[1].resource', message: 'must be a non-empty string, got ""' },
      { path: 'flow[1].threshold', message: 'must be a finite number >= 0, got -1' },
      { path: 'flow[2].metric', message: "must be one of 'qps', 'concurrency', got \"rps\"" },
      { path: 'flow[2].threshold', message: 'must be a finite number >= 0, got Infinity' },
      {
        path: 'flow[2].behavior',
        message: "must be one of 'reject', 'warmUp', 'throttle', 'warmUpThrottle', 'adaptive', got \"drop\"",
      },
      { path: 'flow[3].refResource', message: "is required when strategy is 'relate'" },
      { path: 'flow[4].warmUpPeriodMs', message: 'is required (a finite number > 0 and <= 2147483647)' },
      { path: 'flow[5].warmUpPeriodMs', message: 'must be a finite number > 0 and <= 2147483647, got 0' },
      { path: 'flow[5].coldFactor', message: 'must be a finite number > 1, got 1' },
      { path: 'flow[6].behavior', message: "must be 'reject' or 'adaptive' for a concurrency rule, got 'throttle'" },
      { path: 'flow[7].treshold', message: expect.stringContaining('unknown field') },
      { path: 'flow[7].threshold', message: 'must be a finite number >= 0, got "5"' },
      { path: 'flow[7].maxQueueingTimeMs', message: 'must be a finite number within [0, 2147483647], got -5' },
    ]);
  });

  it.each(['maxQueueingTimeMs', 'warmUpPeriodMs'])(
    'refuses a %s no timer can hold, so no wait can overflow one (#12)',
    (field) => {
      const rule = {
        resource: 'r',
        threshold: 1e-6,
        behavior: 'warmUpThrottle' as const,
        warmUpPeriodMs: 1000,
        maxQueueingTimeMs: 1000,
        [field]: 1e11,
      };
      expect(issuesOf(() => new Floodgate().loadFlowRules([rule]))).toEqual([
        { path: `flow[0].${field}`, message: expect.stringMatching(/2147483647\]?, got 100000000000$/) },
      ]);
    },
  );

  it.each([
    ['throttle', 1e-306],
    ['throttle', 5e-324],
    ['throttle', 1e-310],
    ['throttle', 4e-7],
    ['warmUpThrottle', 1e-306],
    ['warmUpThrottle', 5e-324],
  ] as const)(
    "refuses a '%s' threshold of %s, whose pacing interval is longer than MAX_DURATION_MS, naming threshold (#24)",
    (behavior, threshold) => {
      const rule = {
        resource: 'r',
        threshold,
        behavior,
        ...(behavior === 'warmUpThrottle' ? { warmUpPeriodMs: 1000 } : {}),
      };
      expect(issuesOf(() => new Floodgate().loadFlowRules([rule]))).toEqual([
        {
          path: 'flow[0].threshold',
          message: `must be 0 or at least 4.656612875245797e-7 (one call per 2147483647 ms) for a '${behavior}' rule, got ${threshold}`,
        },
      ]);
    },
  );

  it.each(['throttle', 'warmUpThrottle'] as const)(
    "accepts a '%s' threshold of 0, and the slowest pace: one call per MAX_DURATION_MS",
    (behavior) => {
      const warm = behavior === 'warmUpThrottle' ? { warmUpPeriodMs: 1000 } : {};
      const fg = new Floodgate();
      fg.loadFlowRules([
        { resource: 'a', threshold: 0, behavior, ...warm },
        { resource: 'b', threshold: 1000 / MAX_DURATION_MS, behavior, ...warm },
      ]);
      expect(fg.getRules().flow.map((rule) => rule.threshold)).toEqual([0, 4.656612875245797e-7]);
    },
  );

  it.each([
    ['reject', 2 ** 53],
    ['warmUp', 1e308],
    ['throttle', Number.MAX_VALUE],
    ['warmUpThrottle', 2 ** 53],
  ] as const)(
    "refuses a '%s' threshold of %s, above 2^53 − 1 where counts stop being exact, naming threshold (#24)",
    (behavior, threshold) => {
      const warm = behavior.startsWith('warmUp') ? { warmUpPeriodMs: 1000 } : {};
      expect(issuesOf(() => new Floodgate().loadFlowRules([{ resource: 'r', threshold, behavior, ...warm }]))).toEqual([
        {
          path: 'flow[0].threshold',
          message: `must be at most 9007199254740991 (2^53 − 1, where counts stay exact), got ${threshold}`,
        },
      ]);
    },
  );

  it('refuses a concurrency threshold above 2^53 − 1 too, and accepts 2^53 − 1', () => {
    expect(
      issuesOf(() => new Floodgate().loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: 1e308 }])),
    ).toEqual([expect.objectContaining({ path: 'flow[0].threshold' })]);
    expect(() =>
      new Floodgate().loadFlowRules([{ resource: 'r', metric: 'concurrency', threshold: Number.MAX_SAFE_INTEGER }]),
    ).not.toThrow();
  });

  it('keeps the rules in force when a load is rejected', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    expect(() =>
      fg.loadFlowRules([
        { resource: 'r', threshold: 100 },
        { resource: 'r', threshold: -1 },
      ]),
    ).toThrow(RuleValidationError);
    expect(fg.getRules().flow).toHaveLength(1);
    fg.entry('r').exit();
    expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('rejects a rule set that is not an array or a rule that is not an object', () => {
    expect(issuesOf(() => new Floodgate().loadFlowRules({} as never))).toEqual([
      { path: 'flow', message: 'must be an array, got an object {}' },
    ]);
    expect(issuesOf(() => new Floodgate().loadFlowRules([null as never]))).toEqual([
      { path: 'flow[0]', message: 'must be an object, got null' },
    ]);
  });

  it('validates the cluster settings', () => {
    const issues = issuesOf(() =>
      new Floodgate().loadFlowRules([
        {
          resource: 'r',
          threshold: 1,
          cluster: { thresholdType: 'everyone' as never, fallbackToLocal: 'yes' as never },
        },
      ]),
    );
    expect(issues.map((i) => i.path)).toEqual(['flow[0].cluster.thresholdType', 'flow[0].cluster.fallbackToLocal']);
  });

  it('validates warmUpPeriodMs on a rule that does not warm up, rather than ignoring a bad value', () => {
    expect(
      issuesOf(() => new Floodgate().loadFlowRules([{ resource: 'r', threshold: 1, warmUpPeriodMs: -5 }])),
    ).toEqual([{ path: 'flow[0].warmUpPeriodMs', message: 'must be a finite number > 0 and <= 2147483647, got -5' }]);
  });

  it('drops refResource from a rule that does not relate, as Sentinel ignores it', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([{ resource: 'a', threshold: 1, refResource: 'b' }]);
    expect(fg.getRules().flow[0]).not.toHaveProperty('refResource');
  });

  it('names the problem in the error message', () => {
    expect(() => new Floodgate().loadFlowRules([{ resource: 'r', threshold: -2 }])).toThrow(
      'Invalid rules: flow[0].threshold: must be a finite number >= 0, got -2',
    );
  });
});

describe('adaptive flow rule validation', () => {
  it('resolves minLimit and maxLimit for adaptive rules only', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([
      { resource: 'a', metric: 'concurrency', behavior: 'adaptive', threshold: 10 },
      { resource: 'b', metric: 'concurrency', threshold: 10 },
    ]);
    expect(fg.getRules().flow).toEqual([
      {
        resource: 'a',
        metric: 'concurrency',
        threshold: 10,
        behavior: 'adaptive',
        minLimit: 3,
        maxLimit: 1000,
        strategy: 'direct',
        limitOrigin: 'default',
      },
      {
        resource: 'b',
        metric: 'concurrency',
        threshold: 10,
        behavior: 'reject',
        strategy: 'direct',
        limitOrigin: 'default',
      },
    ]);
  });

  it('takes a starting limit on either bound of [minLimit, maxLimit], even a single value, and refuses one above maxLimit', () => {
    const fg = new Floodgate();
    fg.loadFlowRules([
      { resource: 'a', metric: 'concurrency', behavior: 'adaptive', threshold: 3 },
      { resource: 'b', metric: 'concurrency', behavior: 'adaptive', threshold: 1000 },
      { resource: 'c', metric: 'concurrency', behavior: 'adaptive', threshold: 7, minLimit: 7, maxLimit: 7 },
    ]);
    expect(fg.getRules().flow.map((rule) => [rule.minLimit, rule.threshold, rule.maxLimit])).toEqual([
      [3, 3, 1000],
      [3, 1000, 1000],
      [7, 7, 7],
    ]);
    expect(
      issuesOf(() =>
        new Floodgate().loadFlowRules([
          { resource: 'd', metric: 'concurrency', behavior: 'adaptive', threshold: 1001 },
        ]),
      ),
    ).toEqual([
      {
        path: 'flow[0].threshold',
        message:
          'must be within [minLimit, maxLimit] = [3, 1000] for an adaptive rule (the limit it starts from), got 1001',
      },
    ]);
  });

  it('names every problem of an adaptive rule by path', () => {
    const issues = issuesOf(() =>
      new Floodgate().loadFlowRules([
        { resource: 'q', behavior: 'adaptive', threshold: 10 },
        { resource: 'b', metric: 'concurrency', behavior: 'adaptive', threshold: 10, minLimit: 0, maxLimit: 2.5 },
        { resource: 'c', metric: 'concurrency', behavior: 'adaptive', threshold: 10, minLimit: 20, maxLimit: 5 },
        { resource: 'd', metric: 'concurrency', behavior: 'adaptive', threshold: 2 },
        {
          resource: 'e',
          metric: 'concurrency',
          behavior: 'adaptive',
          threshold: 10,
          strategy: 'relate',
          refResource: 'x',
        },
        { resource: 'f', metric: 'concurrency', behavior: 'adaptive', threshold: 10, cluster: {} },
      ]),
    );
    expect(issues).toEqual([
      { path: 'flow[0].behavior', message: "'adaptive' applies to metric 'concurrency' only" },
      { path: 'flow[1].minLimit', message: 'must be a safe integer >= 1, got 0' },
      { path: 'flow[1].maxLimit', message: 'must be a safe integer >= 1, got 2.5' },
      { path: 'flow[2].maxLimit', message: 'must be >= minLimit (20), got 5' },
      {
        path: 'flow[3].threshold',
        message:
          'must be within [minLimit, maxLimit] = [3, 1000] for an adaptive rule (the limit it starts from), got 2',
      },
      {
        path: 'flow[4].strategy',
        message: "must be 'direct' for an adaptive rule (it learns from the resource's own calls), got 'relate'",
      },
      { path: 'flow[5].cluster', message: expect.stringContaining('cluster mode applies to qps rules only') },
    ]);
  });
});
