import { Floodgate, RuleValidationError, type RuleIssue } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { CIRCUIT_BREAKER_RULE_DEFAULTS } from '../../../packages/core/src/circuit-breaker/circuit-breaker-rule';

const VALID = { resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 } as const;

function issuesOf(rules: unknown[]): RuleIssue[] {
  const fg = new Floodgate({ clock: new ManualClock() });
  try {
    fg.loadCircuitBreakerRules(rules as never);
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return [...(error as RuleValidationError).issues];
  }
  throw new Error('the rules were accepted');
}

describe('normalizeCircuitBreakerRule', () => {
  it('resolves every default', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadCircuitBreakerRules([{ resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 }]);
    expect(fg.getRules().circuitBreakers).toEqual([
      {
        resource: 'r',
        strategy: 'errorRatio',
        threshold: 0.5,
        minRequestAmount: 5,
        statIntervalMs: 1000,
        bucketCount: 1,
        retryTimeoutMs: 1000,
        halfOpenProbes: 1,
      },
    ]);
  });

  it('has frozen defaults matching Sentinel', () => {
    expect(Object.isFrozen(CIRCUIT_BREAKER_RULE_DEFAULTS)).toBe(true);
    expect(CIRCUIT_BREAKER_RULE_DEFAULTS).toEqual({
      minRequestAmount: 5,
      statIntervalMs: 1000,
      bucketCount: 1,
      halfOpenProbes: 1,
    });
  });

  it('keeps every field given', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    const rule = {
      resource: 'r',
      strategy: 'slowRequestRatio',
      threshold: 0.2,
      maxAllowedRtMs: 0,
      minRequestAmount: 1,
      statIntervalMs: 3000,
      bucketCount: 3,
      retryTimeoutMs: 500,
      halfOpenProbes: 2,
    } as const;
    fg.loadCircuitBreakerRules([rule]);
    expect(fg.getRules().circuitBreakers).toEqual([rule]);
  });

  it('does not change the object it was given', () => {
    const input = { ...VALID };
    new Floodgate({ clock: new ManualClock() }).loadCircuitBreakerRules([input as never]);
    expect(input).toEqual(VALID);
  });

  it('accepts an errorCount threshold greater than 1', () => {
    expect(() =>
      new Floodgate().loadCircuitBreakerRules([{ ...VALID, strategy: 'errorCount', threshold: 10 }]),
    ).not.toThrow();
  });

  it('refuses an unknown strategy', () => {
    expect(issuesOf([{ ...VALID, strategy: 'latency' }])).toEqual([
      {
        path: 'circuitBreakers[0].strategy',
        message: "must be one of 'slowRequestRatio', 'errorRatio', 'errorCount', got \"latency\"",
      },
    ]);
  });

  it('requires a strategy', () => {
    const { strategy: _, ...rule } = VALID;
    expect(issuesOf([rule])).toEqual([
      { path: 'circuitBreakers[0].strategy', message: expect.stringContaining('is required') },
    ]);
  });

  it('requires retryTimeoutMs', () => {
    const { retryTimeoutMs: _, ...rule } = VALID;
    expect(issuesOf([rule])).toEqual([
      { path: 'circuitBreakers[0].retryTimeoutMs', message: 'is required (a finite number > 0 and <= 2147483647)' },
    ]);
  });

  it.each([0, -1])('refuses retryTimeoutMs %p', (retryTimeoutMs) => {
    expect(issuesOf([{ ...VALID, retryTimeoutMs }])).toEqual([
      {
        path: 'circuitBreakers[0].retryTimeoutMs',
        message: `must be a finite number > 0 and <= 2147483647, got ${retryTimeoutMs}`,
      },
    ]);
  });

  it.each([0, -1000])('refuses statIntervalMs %p', (statIntervalMs) => {
    expect(issuesOf([{ ...VALID, statIntervalMs }])).toEqual([
      {
        path: 'circuitBreakers[0].statIntervalMs',
        message: `must be a finite number > 0 and <= 2147483647, got ${statIntervalMs}`,
      },
    ]);
  });

  it.each([{ strategy: 'errorRatio' }, { strategy: 'slowRequestRatio', maxAllowedRtMs: 100 }])(
    'refuses a threshold above 1 for $strategy',
    (fields) => {
      expect(issuesOf([{ ...VALID, ...fields, threshold: 1.5 }])).toEqual([
        { path: 'circuitBreakers[0].threshold', message: 'must be a finite number within [0, 1], got 1.5' },
      ]);
    },
  );

  it('refuses a negative ratio threshold', () => {
    expect(issuesOf([{ ...VALID, threshold: -0.1 }])).toEqual([
      { path: 'circuitBreakers[0].threshold', message: 'must be a finite number within [0, 1], got -0.1' },
    ]);
  });

  it('refuses a negative errorCount threshold', () => {
    expect(issuesOf([{ ...VALID, strategy: 'errorCount', threshold: -1 }])).toEqual([
      { path: 'circuitBreakers[0].threshold', message: 'must be a finite number >= 0, got -1' },
    ]);
  });

  it('requires maxAllowedRtMs for slowRequestRatio', () => {
    expect(issuesOf([{ ...VALID, strategy: 'slowRequestRatio' }])).toEqual([
      { path: 'circuitBreakers[0].maxAllowedRtMs', message: 'is required (a finite number within [0, 2147483647])' },
    ]);
  });

  it('refuses a negative maxAllowedRtMs', () => {
    expect(issuesOf([{ ...VALID, strategy: 'slowRequestRatio', maxAllowedRtMs: -5 }])).toEqual([
      { path: 'circuitBreakers[0].maxAllowedRtMs', message: 'must be a finite number within [0, 2147483647], got -5' },
    ]);
  });

  it('refuses maxAllowedRtMs for a strategy other than slowRequestRatio', () => {
    expect(issuesOf([{ ...VALID, maxAllowedRtMs: 100 }])).toEqual([
      {
        path: 'circuitBreakers[0].maxAllowedRtMs',
        message: "is only allowed when strategy is 'slowRequestRatio', got strategy 'errorRatio'",
      },
    ]);
  });

  it.each([-1, 0, 2.5])('refuses minRequestAmount %p (0 too, as Sentinel Java)', (minRequestAmount) => {
    expect(issuesOf([{ ...VALID, minRequestAmount }])).toEqual([
      { path: 'circuitBreakers[0].minRequestAmount', message: `must be a safe integer >= 1, got ${minRequestAmount}` },
    ]);
  });

  it.each([0, 1.5])('refuses halfOpenProbes %p', (halfOpenProbes) => {
    expect(issuesOf([{ ...VALID, halfOpenProbes }])).toEqual([
      { path: 'circuitBreakers[0].halfOpenProbes', message: `must be a safe integer >= 1, got ${halfOpenProbes}` },
    ]);
  });

  it.each([0, 2.5])('refuses bucketCount %p', (bucketCount) => {
    expect(issuesOf([{ ...VALID, bucketCount }])).toEqual([
      { path: 'circuitBreakers[0].bucketCount', message: `must be a safe integer >= 1, got ${bucketCount}` },
    ]);
  });

  it('refuses a statIntervalMs that does not split into whole-millisecond buckets', () => {
    expect(issuesOf([{ ...VALID, statIntervalMs: 1000, bucketCount: 3 }])).toEqual([
      {
        path: 'circuitBreakers[0].statIntervalMs',
        message: 'must split into bucketCount (3) buckets of whole milliseconds, got 1000',
      },
    ]);
  });

  it('keeps cluster: true, and drops cluster: false', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadCircuitBreakerRules([
      { ...VALID, cluster: true },
      { ...VALID, resource: 's', cluster: false },
    ]);
    expect(fg.getRules().circuitBreakers.map((rule) => rule.cluster)).toEqual([true, undefined]);
  });

  it('refuses a cluster field that is not a boolean', () => {
    expect(issuesOf([{ ...VALID, cluster: { thresholdType: 'global' } }])).toEqual([
      {
        path: 'circuitBreakers[0].cluster',
        message: 'must be true or false, got an object {"thresholdType":"global"}',
      },
    ]);
  });

  it('refuses an unknown field', () => {
    expect(issuesOf([{ ...VALID, timeWindow: 5 }])).toEqual([
      {
        path: 'circuitBreakers[0].timeWindow',
        message: expect.stringMatching(/^unknown field \(allowed: resource, strategy, threshold,/),
      },
    ]);
  });

  it('lists every problem of every rule in one error', () => {
    const issues = issuesOf([
      VALID,
      { resource: 'r', strategy: 'slowRequestRatio', threshold: 2, retryTimeoutMs: 0, halfOpenProbes: 0 },
      { resource: '', strategy: 'errorCount', threshold: -1, retryTimeoutMs: 1000, minRequestAmount: -1 },
    ]);
    expect(issues.map((i) => i.path)).toEqual([
      'circuitBreakers[1].threshold',
      'circuitBreakers[1].maxAllowedRtMs',
      'circuitBreakers[1].retryTimeoutMs',
      'circuitBreakers[1].halfOpenProbes',
      'circuitBreakers[2].resource',
      'circuitBreakers[2].threshold',
      'circuitBreakers[2].minRequestAmount',
    ]);
  });

  it('leaves the rules in force, and their breakers, unchanged when a rule set is refused', () => {
    const fg = new Floodgate({ clock: new ManualClock() });
    fg.loadCircuitBreakerRules([{ ...VALID, strategy: 'errorCount', threshold: 0, minRequestAmount: 1 }]);
    const before = fg.getRules();
    const entry = fg.entry('r');
    entry.traceError(new Error('boom'));
    entry.exit();
    expect(() => fg.loadCircuitBreakerRules([{ ...VALID, threshold: 3 }])).toThrow(RuleValidationError);
    expect(fg.getRules()).toBe(before);
    expect(fg.circuitState('r').map((s) => s.state)).toEqual(['open']);
  });

  it('reports paths the same way through loadRules', () => {
    const fg = new Floodgate();
    expect(() => fg.loadRules({ circuitBreakers: [{ ...VALID, threshold: 3 }] as never })).toThrow(
      expect.objectContaining({
        issues: [{ path: 'circuitBreakers[0].threshold', message: 'must be a finite number within [0, 1], got 3' }],
      }),
    );
  });
});
