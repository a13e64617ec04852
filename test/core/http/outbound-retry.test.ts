import { Floodgate } from '@floodgate/core';
import { retryBudgetAllows, retryDelayMs } from '@floodgate/core/http';
import { ManualClock } from '@floodgate/core/testing';

describe('retryDelayMs', () => {
  const backoff = { baseDelayMs: 100, maxDelayMs: 300 };

  it('draws retry n from [0, min(maxDelayMs, baseDelayMs × 2^(n−1))] (full jitter)', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, backoff, () => 0.5))).toEqual([50, 100, 150, 150]);
    expect(retryDelayMs(3, backoff, () => 0)).toBe(0);
  });

  it('waits at least what the dependency asked for', () => {
    expect(retryDelayMs(1, backoff, () => 0.5, 400)).toBe(400);
    expect(retryDelayMs(1, backoff, () => 0.5, 10)).toBe(50);
  });
});

describe('retryBudgetAllows', () => {
  it('allows a retry while the budget has one, then counts the refused retry as a block', () => {
    const fg = new Floodgate({ clock: new ManualClock(0) });
    expect(retryBudgetAllows(fg, 'r')).toBe(true); // no budget
    fg.loadRules({ retryBudgets: [{ resource: 'r', retryRatio: 1, minRetriesPerSecond: 0 }] });
    fg.tryEntry('r', { attempt: 'first' });
    expect(retryBudgetAllows(fg, 'r')).toBe(true);
    fg.tryEntry('r', { attempt: 'retry' });
    expect(retryBudgetAllows(fg, 'r')).toBe(false);
    expect(fg.blocksByRule('r')).toEqual([{ kind: 'retryBudget', ruleId: 'retryBudget#0', count: 1 }]);
  });
});
