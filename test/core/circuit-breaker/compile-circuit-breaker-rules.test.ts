import { Floodgate } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';

const RULE: CircuitBreakerRuleOptions = {
  resource: 'r',
  strategy: 'errorCount',
  threshold: 0,
  minRequestAmount: 1,
  retryTimeoutMs: 1000,
  statIntervalMs: 60_000,
};

function setup(rules: CircuitBreakerRuleOptions[]) {
  const clock = new ManualClock(10_000);
  const fg = new Floodgate({ clock });
  fg.loadCircuitBreakerRules(rules);
  return { clock, fg };
}

function fail(fg: Floodgate, resource = 'r'): void {
  const entry = fg.entry(resource);
  entry.traceError(new Error('boom'));
  entry.exit();
}

function stateOf(fg: Floodgate, resource = 'r') {
  return fg.circuitState(resource).map((s) => s.state);
}

describe('compileCircuitBreakerRules', () => {
  it('makes one breaker per rule, reported in rule order', () => {
    const { fg } = setup([RULE, { ...RULE, strategy: 'errorRatio', threshold: 0.5 }, { ...RULE, resource: 'other' }]);
    expect(fg.circuitState('r').map((s) => s.rule.strategy)).toEqual(['errorCount', 'errorRatio']);
    expect(fg.circuitState('other')).toHaveLength(1);
  });

  it('keeps an open breaker open, with the same deadline, when its rule is reloaded unchanged', async () => {
    const { fg, clock } = setup([RULE]);
    fail(fg);
    await clock.advance(400);
    fg.loadCircuitBreakerRules([{ ...RULE }]);
    expect(fg.circuitState('r')).toMatchObject([{ state: 'open', retryAfterMs: 600 }]);
  });

  it('keeps breaker state when another kind of rule is loaded', () => {
    const { fg } = setup([RULE]);
    fail(fg);
    fg.loadFlowRules([{ resource: 'r', threshold: 100 }]);
    expect(stateOf(fg)).toEqual(['open']);
  });

  it('keeps the window of an unchanged rule across a reload', () => {
    const { fg } = setup([{ ...RULE, threshold: 1 }]);
    fail(fg);
    fg.loadCircuitBreakerRules([{ ...RULE, threshold: 1 }]);
    fail(fg);
    expect(stateOf(fg)).toEqual(['open']);
  });

  it('keeps a running probe of an unchanged rule across a reload', async () => {
    const { fg, clock } = setup([RULE]);
    fail(fg);
    await clock.advance(1000);
    const probe = fg.entry('r');
    fg.loadCircuitBreakerRules([RULE]);
    probe.exit();
    expect(stateOf(fg)).toEqual(['closed']);
  });

  it('starts a fresh, closed breaker when the rule changes', () => {
    const { fg } = setup([RULE]);
    fail(fg);
    fg.loadCircuitBreakerRules([{ ...RULE, retryTimeoutMs: 2000 }]);
    expect(stateOf(fg)).toEqual(['closed']);
    expect(fg.tryEntry('r')).not.toBeInstanceOf(Error);
  });

  it('starts a changed rule with an empty window', () => {
    const { fg } = setup([{ ...RULE, threshold: 1 }]);
    fail(fg);
    fg.loadCircuitBreakerRules([{ ...RULE, threshold: 1, minRequestAmount: 2 }]);
    fail(fg);
    expect(stateOf(fg)).toEqual(['closed']);
  });

  it('keeps the unchanged one of two breakers when only the other changes', () => {
    const other: CircuitBreakerRuleOptions = { ...RULE, strategy: 'errorRatio', threshold: 0.5 };
    const { fg } = setup([RULE, other]);
    fail(fg);
    fg.loadCircuitBreakerRules([RULE, { ...other, threshold: 0.9 }]);
    expect(stateOf(fg)).toEqual(['open', 'closed']);
  });

  it('starts fresh when a removed rule is loaded again', () => {
    const { fg } = setup([RULE]);
    fail(fg);
    fg.loadCircuitBreakerRules([]);
    fg.loadCircuitBreakerRules([RULE]);
    expect(stateOf(fg)).toEqual(['closed']);
  });

  it('does not announce transitions of a breaker whose rule was replaced', () => {
    const { fg } = setup([{ ...RULE, threshold: 0 }]);
    const events: string[] = [];
    fg.on('circuitStateChange', (e) => events.push(`${e.rule.threshold}:${e.from}->${e.to}`));
    const admittedUnderOldRule = fg.entry('r');
    fg.loadCircuitBreakerRules([{ ...RULE, threshold: 5 }]);
    admittedUnderOldRule.traceError(new Error('late failure'));
    admittedUnderOldRule.exit();
    expect(events).toEqual([]);
    expect(stateOf(fg)).toEqual(['closed']);
  });
});
