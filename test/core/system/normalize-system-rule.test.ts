import { Floodgate, RuleValidationError } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { SYSTEM_RULE_DEFAULTS } from '../../../packages/core/src/system/system-rule';
import { normalizeRules } from '../rules';

const issuesOf = (rules: unknown[]): { path: string; message: string }[] => {
  try {
    normalizeRules('system', rules);
  } catch (error) {
    if (error instanceof RuleValidationError) return [...error.issues];
    throw error;
  }
  throw new Error('the rules were accepted');
};

describe('normalizeSystemRule', () => {
  it('keeps the limits given and resolves the retry hint', () => {
    expect(normalizeRules('system', [{ maxCpuUsage: 0.8, maxQps: 500 }])).toEqual([
      { maxQps: 500, maxCpuUsage: 0.8, retryAfterMs: SYSTEM_RULE_DEFAULTS.retryAfterMs },
    ]);
  });

  it('accepts every limit together', () => {
    const rule = {
      maxEventLoopDelayMs: 100,
      maxEventLoopUtilization: 0.9,
      maxCpuUsage: 0.8,
      maxHeapUsedBytes: 1_000_000_000,
      maxRssBytes: 2_000_000_000,
      maxConcurrency: 200,
      maxQps: 1000.5,
      maxAvgRtMs: 250,
      retryAfterMs: 5000,
    };
    expect(normalizeRules('system', [rule])).toEqual([rule]);
  });

  it('requires at least one limit', () => {
    expect(issuesOf([{ retryAfterMs: 100 }])).toEqual([
      { path: 'system[0]', message: expect.stringContaining('must set at least one limit') },
    ]);
  });

  it('names every field out of its range, by path', () => {
    const issues = issuesOf([
      {
        maxEventLoopDelayMs: -1,
        maxEventLoopUtilization: 1.5,
        maxCpuUsage: -0.1,
        maxHeapUsedBytes: 1.5,
        maxRssBytes: '1GB',
        maxConcurrency: 2.5,
        maxQps: Number.NaN,
        maxAvgRtMs: 2 ** 31,
        retryAfterMs: -5,
      },
    ]);
    expect(issues.map((issue) => issue.path)).toEqual([
      'system[0].maxQps',
      'system[0].maxConcurrency',
      'system[0].maxAvgRtMs',
      'system[0].maxHeapUsedBytes',
      'system[0].maxRssBytes',
      'system[0].maxEventLoopDelayMs',
      'system[0].maxEventLoopUtilization',
      'system[0].maxCpuUsage',
      'system[0].retryAfterMs',
    ]);
    expect(issues.find((issue) => issue.path === 'system[0].maxEventLoopUtilization')!.message).toBe(
      'must be a finite number within [0, 1], got 1.5',
    );
  });

  it.each([2 ** 53, 1e308])(
    'refuses a maxQps of %s, above 2^53 − 1 where counts stop being exact, and accepts 2^53 − 1 (#24)',
    (maxQps) => {
      expect(issuesOf([{ maxQps }])).toEqual([
        {
          path: 'system[0].maxQps',
          message: `must be at most 9007199254740991 (2^53 − 1, where counts stay exact), got ${maxQps}`,
        },
      ]);
      expect(normalizeRules('system', [{ maxQps: Number.MAX_SAFE_INTEGER }])).toHaveLength(1);
    },
  );

  it('refuses unknown fields, a resource among them (system rules apply to every inbound call)', () => {
    expect(issuesOf([{ resource: 'GET /a', maxQps: 1 }])).toEqual([
      { path: 'system[0].resource', message: expect.stringContaining('unknown field') },
    ]);
  });

  it('refuses a rule that is not an object', () => {
    expect(issuesOf([42])).toEqual([{ path: 'system[0]', message: 'must be an object, got 42' }]);
  });

  it('keeps the rules in force when a system rule set is rejected', () => {
    const fg = new Floodgate({ clock: new ManualClock(), probe: new ManualProbe() });
    fg.loadSystemRules([{ maxQps: 5 }]);
    expect(() => fg.loadSystemRules([{ maxQps: -5 }])).toThrow('system[0].maxQps');
    expect(fg.getRules().system).toEqual([{ maxQps: 5, retryAfterMs: 1000 }]);
  });
});
