import { RETRY_BUDGET_RULE_DEFAULTS } from '../../../packages/core/src/retry-budget/retry-budget-rule';
import { Entry, Floodgate, RetryBudgetExhaustedError, isBlockError } from '@floodgate/core';
import type { RetryBudgetRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import fc from 'fast-check';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

function engine(rule: Partial<RetryBudgetRuleOptions> = {}): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(1_000_000);
  const fg = new Floodgate({ clock });
  fg.loadRules({ retryBudgets: [{ resource: 'r', ...rule }] });
  return { fg, clock };
}

/** Enters and exits `n` calls of the given attempt; returns how many passed. */
function calls(fg: Floodgate, n: number, attempt: 'first' | 'retry' | 'hedge' = 'first'): number {
  let passed = 0;
  for (let i = 0; i < n; i++) {
    const entry = fg.tryEntry('r', { attempt });
    if (entry instanceof Entry) {
      passed++;
      entry.exit();
    }
  }
  return passed;
}

describe('retry budget rules', () => {
  it("resolves Finagle's defaults", () => {
    const { fg } = engine();
    expect(fg.getRules().retryBudgets).toEqual([{ resource: 'r', ...RETRY_BUDGET_RULE_DEFAULTS }]);
    expect(RETRY_BUDGET_RULE_DEFAULTS).toEqual({ retryRatio: 0.2, ttlMs: 10_000, minRetriesPerSecond: 10 });
  });

  it('names every bad field by path, with its range and value', () => {
    const fg = new Floodgate();
    expect(() =>
      fg.loadRules({
        retryBudgets: [
          { resource: 'r', retryRatio: -1, ttlMs: 999, minRetriesPerSecond: Number.NaN, extra: 1 } as never,
        ],
      }),
    ).toThrow(
      'retryBudgets[0].extra: unknown field (allowed: resource, retryRatio, ttlMs, minRetriesPerSecond); ' +
        'retryBudgets[0].retryRatio: must be a finite number within [0, 1000], got -1; ' +
        'retryBudgets[0].ttlMs: must be a finite number within [1000, 60000], got 999; ' +
        'retryBudgets[0].minRetriesPerSecond: must be a finite number >= 0, got NaN',
    );
    expect(fg.getRules().retryBudgets).toEqual([]);
  });

  it('lets first attempts pass whatever the budget', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 0 });
    expect(calls(fg, 100)).toBe(100);
  });

  it('allows the reserve of minRetriesPerSecond × ttl seconds with no traffic at all', () => {
    const { fg } = engine({ minRetriesPerSecond: 2, ttlMs: 5000 });
    expect(calls(fg, 20, 'retry')).toBe(10);
  });

  it('refuses a retry beyond the budget with RetryBudgetExhaustedError', () => {
    const { fg } = engine({ minRetriesPerSecond: 0 });
    const refused = fg.tryEntry('r', { attempt: 'retry' });
    expect(refused).toBeInstanceOf(RetryBudgetExhaustedError);
    expect(refused).toMatchObject({
      code: 'ERR_RETRY_BUDGET_EXHAUSTED',
      kind: 'retryBudget',
      refusal: 'capacity',
      resource: 'r',
      message: 'Retry budget of "r" is exhausted',
    });
    expect(isBlockError(refused)).toBe(true);
  });

  it('earns retryRatio retries per first attempt, hedges spending the same budget', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 0.2 });
    calls(fg, 50);
    expect(calls(fg, 5, 'hedge') + calls(fg, 20, 'retry')).toBe(10);
  });

  it('counts 0.29 × 100 first attempts as 29 retries despite float rounding', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 0.29 });
    calls(fg, 100);
    expect(calls(fg, 40, 'retry')).toBe(29);
  });

  it('forgets deposits and withdrawals after ttlMs', async () => {
    const { fg, clock } = engine({ minRetriesPerSecond: 0, retryRatio: 1, ttlMs: 1000 });
    calls(fg, 3);
    expect(calls(fg, 5, 'retry')).toBe(3);
    await clock.advance(1200);
    expect(calls(fg, 1, 'retry')).toBe(0);
    calls(fg, 2);
    expect(calls(fg, 5, 'retry')).toBe(2);
  });

  it('gives back the deposit and the withdrawal of a call a later check refuses', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 1 });
    fg.loadRules({
      circuitBreakers: [
        { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 60_000 },
      ],
    });
    const failed = fg.entry('r');
    failed.traceError(new Error('down'));
    failed.exit();
    // The breaker is open: the next first attempts are refused and deposit nothing.
    expect(calls(fg, 10)).toBe(0);
    fg.loadRules({ circuitBreakers: [] });
    expect(calls(fg, 5, 'retry')).toBe(1);
  });

  it('gives back a withdrawal when the admitted retry is cancelled', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 1 });
    calls(fg, 1);
    const retry = fg.entry('r', { attempt: 'retry' });
    retry.cancel();
    expect(calls(fg, 5, 'retry')).toBe(1);
  });

  it('keeps its balance across a reload of the same rule', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 1 });
    calls(fg, 2);
    fg.loadRules({ retryBudgets: [{ resource: 'r', minRetriesPerSecond: 0, retryRatio: 1 }] });
    expect(calls(fg, 5, 'retry')).toBe(2);
  });

  it('reports each budget of a resource with the retries it allows now, read-only', () => {
    const { fg } = engine({ minRetriesPerSecond: 0, retryRatio: 0.5 });
    calls(fg, 5);
    expect(fg.retryBudgets('r')).toEqual([{ rule: expect.objectContaining({ retryRatio: 0.5 }), balance: 2 }]);
    expect(fg.retryBudgets('r')[0]!.balance).toBe(2);
    expect(calls(fg, 5, 'retry')).toBe(2);
    expect(fg.retryBudgets('r')[0]!.balance).toBe(0);
    expect(fg.retryBudgets('unknown')).toEqual([]);
  });

  it('refuses an attempt that is not first, retry or hedge', () => {
    const { fg } = engine();
    expect(() => fg.tryEntry('r', { attempt: 'again' as never })).toThrow(
      `attempt must be 'first', 'retry' or 'hedge', got "again"`,
    );
  });

  it(
    'never admits a retry beyond its reserve plus retryRatio × the first attempts of its window',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            retryRatio: fc.constantFrom(0, 0.1, 0.2, 0.29, 1),
            minRetriesPerSecond: fc.constantFrom(0, 1, 10),
          }),
          fc.array(
            fc.oneof(
              fc.record({ op: fc.constant('first' as const), n: fc.integer({ min: 1, max: 20 }) }),
              fc.record({
                op: fc.constantFrom('retry' as const, 'hedge' as const),
                n: fc.integer({ min: 1, max: 40 }),
              }),
              fc.record({ op: fc.constant('advance' as const), n: fc.integer({ min: 1, max: 4000 }) }),
            ),
            { maxLength: 40 },
          ),
          async (rule, steps) => {
            const ttlMs = 1000;
            const bucketMs = ttlMs / 10;
            const { fg, clock } = engine({ ...rule, ttlMs });
            const reserve = (rule.minRetriesPerSecond * ttlMs) / 1000;
            // Every call admitted, in order, with its bucket: a window is the ten buckets up to a call's own.
            const log: { bucket: number; retry: boolean }[] = [];
            for (const step of steps) {
              if (step.op === 'advance') {
                await clock.advance(step.n);
                continue;
              }
              for (let i = 0; i < step.n; i++) {
                const entry = fg.tryEntry('r', { attempt: step.op });
                if (!(entry instanceof Entry)) continue;
                const bucket = Math.floor(clock.now() / bucketMs);
                log.push({ bucket, retry: step.op !== 'first' });
                entry.exit();
                if (step.op === 'first') continue;
                const window = log.filter((call) => call.bucket > bucket - 10);
                const firsts = window.filter((call) => !call.retry).length;
                expect(window.length - firsts).toBeLessThanOrEqual(reserve + rule.retryRatio * firsts + 1e-9);
              }
            }
          },
        ),
        propertyRuns(200),
      );
    },
    propertyTimeoutMs(200),
  );
});
