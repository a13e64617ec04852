import { CircuitOpenError, Floodgate, type Entry } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import type { CircuitStateChangeEvent } from '@floodgate/core/metrics';

const START = 10_000;

function setup(rules: CircuitBreakerRuleOptions[]) {
  const clock = new ManualClock(START);
  const fg = new Floodgate({ clock });
  fg.loadCircuitBreakerRules(rules);
  const events: CircuitStateChangeEvent[] = [];
  fg.on('circuitStateChange', (event) => events.push(event));
  const transitions = () => events.map((e) => `${e.rule.strategy}:${e.from}->${e.to}`);
  return { clock, fg, events, transitions };
}

function fail(fg: Floodgate, resource = 'r'): void {
  const entry = fg.entry(resource);
  entry.traceError(new Error('boom'));
  entry.exit();
}

function succeed(fg: Floodgate, resource = 'r'): void {
  fg.entry(resource).exit();
}

/** One call of `rtMs` (the clock moves by that much). */
async function call(fg: Floodgate, clock: ManualClock, rtMs: number, resource = 'r'): Promise<void> {
  const entry = fg.entry(resource);
  await clock.advance(rtMs);
  entry.exit();
}

function stateOf(fg: Floodgate, resource = 'r') {
  return fg.circuitState(resource).map((s) => s.state);
}

function asEntry(result: Entry | Error): Entry {
  if (result instanceof Error) throw result;
  return result;
}

/** errorCount, threshold 0, one call: the first failure opens it. */
const ONE_ERROR_OPENS: CircuitBreakerRuleOptions = {
  resource: 'r',
  strategy: 'errorCount',
  threshold: 0,
  minRequestAmount: 1,
  retryTimeoutMs: 1000,
  statIntervalMs: 60_000,
};

describe('circuit breakers through the engine', () => {
  describe('tripping', () => {
    it('does not trip while the window holds fewer than minRequestAmount calls', () => {
      const { fg } = setup([{ resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 }]);
      for (let i = 0; i < 4; i++) fail(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('trips on the call that brings the window to minRequestAmount calls', () => {
      const { fg } = setup([{ resource: 'r', strategy: 'errorRatio', threshold: 0.5, retryTimeoutMs: 1000 }]);
      for (let i = 0; i < 5; i++) fail(fg);
      expect(stateOf(fg)).toEqual(['open']);
    });

    it('does not trip an errorCount breaker when the count equals the threshold', () => {
      const { fg } = setup([{ ...ONE_ERROR_OPENS, threshold: 3 }]);
      for (let i = 0; i < 3; i++) fail(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('trips an errorCount breaker when the count is greater than the threshold', () => {
      const { fg, events } = setup([{ ...ONE_ERROR_OPENS, threshold: 3 }]);
      for (let i = 0; i < 4; i++) fail(fg);
      expect(events).toMatchObject([{ from: 'closed', to: 'open', value: 4 }]);
    });

    it('does not trip an errorRatio breaker when the ratio equals the threshold', () => {
      const { fg } = setup([{ ...ONE_ERROR_OPENS, strategy: 'errorRatio', threshold: 0.5, minRequestAmount: 4 }]);
      fail(fg);
      fail(fg);
      succeed(fg);
      succeed(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('trips an errorRatio breaker when the ratio is greater than the threshold', () => {
      const { fg, events } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'errorRatio', threshold: 0.5, minRequestAmount: 4 },
      ]);
      fail(fg);
      fail(fg);
      succeed(fg);
      succeed(fg);
      fail(fg);
      expect(events).toMatchObject([{ from: 'closed', to: 'open', value: 0.6 }]);
    });

    it('trips an errorRatio breaker with threshold 1.0 when every call failed', () => {
      const { fg, events } = setup([{ ...ONE_ERROR_OPENS, strategy: 'errorRatio', threshold: 1, minRequestAmount: 3 }]);
      for (let i = 0; i < 3; i++) fail(fg);
      expect(events).toMatchObject([{ from: 'closed', to: 'open', value: 1 }]);
    });

    it('does not trip an errorRatio breaker with threshold 1.0 while one call succeeded', () => {
      const { fg } = setup([{ ...ONE_ERROR_OPENS, strategy: 'errorRatio', threshold: 1, minRequestAmount: 3 }]);
      succeed(fg);
      for (let i = 0; i < 5; i++) fail(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('counts a call as slow only when its response time is greater than maxAllowedRtMs', async () => {
      const { fg, clock } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 0, maxAllowedRtMs: 100 },
      ]);
      await call(fg, clock, 100);
      expect(stateOf(fg)).toEqual(['closed']);
      await call(fg, clock, 101);
      expect(stateOf(fg)).toEqual(['open']);
    });

    it('does not trip a slowRequestRatio breaker when the slow ratio equals the threshold', async () => {
      const { fg, clock } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 0.5, maxAllowedRtMs: 100, minRequestAmount: 2 },
      ]);
      await call(fg, clock, 101);
      await call(fg, clock, 10);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('trips a slowRequestRatio breaker when the slow ratio is greater than the threshold', async () => {
      const { fg, clock, events } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 0.5, maxAllowedRtMs: 100, minRequestAmount: 2 },
      ]);
      await call(fg, clock, 101);
      await call(fg, clock, 10);
      await call(fg, clock, 150);
      expect(events).toMatchObject([{ from: 'closed', to: 'open', value: 2 / 3 }]);
    });

    it('trips a slowRequestRatio breaker with threshold 1.0 when every call was slow', async () => {
      const { fg, clock, events } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 1, maxAllowedRtMs: 100, minRequestAmount: 2 },
      ]);
      await call(fg, clock, 101);
      await call(fg, clock, 101);
      expect(events).toMatchObject([{ from: 'closed', to: 'open', value: 1 }]);
    });

    it('counts errors thrown inside run()', async () => {
      const { fg } = setup([ONE_ERROR_OPENS]);
      await expect(fg.run('r', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
      expect(stateOf(fg)).toEqual(['open']);
    });

    it('does not count calls that succeed inside run()', async () => {
      const { fg } = setup([ONE_ERROR_OPENS]);
      await fg.run('r', () => 'ok');
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('forgets the previous interval of a tumbling window', async () => {
      const { fg, clock } = setup([{ ...ONE_ERROR_OPENS, threshold: 1, statIntervalMs: 1000 }]);
      await clock.advance(500);
      fail(fg);
      await clock.advance(500); // the next interval starts
      fail(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('counts the last statIntervalMs across buckets when bucketCount > 1', async () => {
      const { fg, clock } = setup([{ ...ONE_ERROR_OPENS, threshold: 1, statIntervalMs: 1000, bucketCount: 2 }]);
      await clock.advance(600);
      fail(fg);
      await clock.advance(400);
      fail(fg);
      expect(stateOf(fg)).toEqual(['open']);
    });
  });

  describe('open', () => {
    it('refuses calls with a CircuitOpenError carrying the rule and the time left until probing', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(300);
      const blocked = fg.tryEntry('r');
      expect(blocked).toBeInstanceOf(CircuitOpenError);
      expect(blocked).toMatchObject({
        code: 'ERR_CIRCUIT_OPEN',
        resource: 'r',
        retryAfterMs: 700,
        rule: fg.getRules().circuitBreakers[0],
      });
    });

    it('makes run() reject with ERR_CIRCUIT_OPEN without calling the function', async () => {
      const { fg } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      const fn = jest.fn();
      await expect(fg.run('r', fn)).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN' });
      expect(fn).not.toHaveBeenCalled();
    });

    it('still refuses calls 1 ms before retryTimeoutMs has passed', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(999);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1 });
    });

    it('lets a probe through once retryTimeoutMs has passed', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      expect(fg.tryEntry('r')).not.toBeInstanceOf(Error);
      expect(stateOf(fg)).toEqual(['halfOpen']);
    });

    it('reports open with the time left in circuitState', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(250);
      expect(fg.circuitState('r')).toEqual([
        { rule: fg.getRules().circuitBreakers[0], state: 'open', retryAfterMs: 750 },
      ]);
    });
  });

  describe('half-open', () => {
    it('refuses other calls while the probe runs, until the probe would time out', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      fg.entry('r');
      await clock.advance(200);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 800 });
    });

    it('closes when the probe succeeds', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      succeed(fg);
      expect(stateOf(fg)).toEqual(['closed']);
      expect(fg.tryEntry('r')).not.toBeInstanceOf(Error);
    });

    it('empties its window when it closes', async () => {
      const { fg, clock } = setup([{ ...ONE_ERROR_OPENS, threshold: 2 }]);
      for (let i = 0; i < 3; i++) fail(fg);
      await clock.advance(1000);
      succeed(fg);
      fail(fg); // would be the 4th error of the same window without the reset
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('reopens for a fresh retryTimeoutMs when the probe fails', async () => {
      const { fg, clock, events } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      const probe = fg.entry('r');
      await clock.advance(300);
      probe.traceError(new Error('still down'));
      probe.exit();
      expect(events.at(-1)).toMatchObject({ from: 'halfOpen', to: 'open', value: 1 });
      await clock.advance(999);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1 });
      await clock.advance(1);
      expect(fg.tryEntry('r')).not.toBeInstanceOf(Error);
    });

    it('reopens a slowRequestRatio breaker when the probe is slow', async () => {
      const { fg, clock } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 0, maxAllowedRtMs: 100 },
      ]);
      await call(fg, clock, 101);
      await clock.advance(1000);
      await call(fg, clock, 101);
      expect(stateOf(fg)).toEqual(['open']);
    });

    it('closes a slowRequestRatio breaker when the probe is fast', async () => {
      const { fg, clock } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'slowRequestRatio', threshold: 0, maxAllowedRtMs: 100 },
      ]);
      await call(fg, clock, 101);
      await clock.advance(1000);
      await call(fg, clock, 100);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('lets exactly halfOpenProbes calls through as probes', async () => {
      const { fg, clock } = setup([{ ...ONE_ERROR_OPENS, halfOpenProbes: 3 }]);
      fail(fg);
      await clock.advance(1000);
      const results = [1, 2, 3, 4].map(() => fg.tryEntry('r'));
      expect(results.map((r) => r instanceof Error)).toEqual([false, false, false, true]);
    });

    it('closes only once every probe has succeeded', async () => {
      const { fg, clock } = setup([{ ...ONE_ERROR_OPENS, halfOpenProbes: 3 }]);
      fail(fg);
      await clock.advance(1000);
      const probes = [1, 2, 3].map(() => fg.entry('r'));
      probes[0]!.exit();
      probes[1]!.exit();
      expect(stateOf(fg)).toEqual(['halfOpen']);
      probes[2]!.exit();
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('reopens on the first failing probe and ignores the probes still running', async () => {
      const { fg, clock, transitions } = setup([{ ...ONE_ERROR_OPENS, halfOpenProbes: 2 }]);
      fail(fg);
      await clock.advance(1000);
      const [first, second] = [fg.entry('r'), fg.entry('r')];
      first.traceError(new Error('boom'));
      first.exit();
      second.exit();
      expect(transitions()).toEqual([
        'errorCount:closed->open',
        'errorCount:open->halfOpen',
        'errorCount:halfOpen->open',
      ]);
    });

    it('does not count calls admitted before the breaker opened as probes', async () => {
      const { fg, clock, transitions } = setup([ONE_ERROR_OPENS]);
      const before = fg.entry('r');
      fail(fg);
      await clock.advance(1000);
      const probe = fg.entry('r');
      before.exit(); // succeeds while half-open
      expect(stateOf(fg)).toEqual(['halfOpen']);
      probe.traceError(new Error('boom'));
      probe.exit();
      expect(transitions()).toEqual([
        'errorCount:closed->open',
        'errorCount:open->halfOpen',
        'errorCount:halfOpen->open',
      ]);
    });

    it('does not let a call admitted before the breaker opened reopen it', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      const before = fg.entry('r');
      fail(fg);
      await clock.advance(1000);
      const probe = fg.entry('r');
      before.traceError(new Error('late failure'));
      before.exit();
      probe.exit();
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('releases a probe that never finishes as failed, retryTimeoutMs after it started', async () => {
      const { fg, clock, events } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      fg.entry('r'); // never exits
      await clock.advance(999);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1 });
      await clock.advance(1);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1000 });
      expect(events.at(-1)).toMatchObject({ from: 'halfOpen', to: 'open', value: 1 });
    });

    it('probes again retryTimeoutMs after a probe timed out', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      fg.entry('r'); // never exits
      await clock.advance(2000);
      succeed(fg);
      expect(stateOf(fg)).toEqual(['closed']);
    });

    it('reports a timed-out probe in circuitState without waiting for a call', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      fg.entry('r');
      await clock.advance(1400);
      expect(fg.circuitState('r')).toMatchObject([{ state: 'open', retryAfterMs: 600 }]);
    });

    it('ignores the late completion of a timed-out probe', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      const zombie = fg.entry('r');
      await clock.advance(1000);
      expect(stateOf(fg)).toEqual(['open']);
      zombie.exit();
      expect(stateOf(fg)).toEqual(['open']);
    });

    it('reports half-open with the time until the probe times out in circuitState', async () => {
      const { fg, clock } = setup([ONE_ERROR_OPENS]);
      fail(fg);
      await clock.advance(1000);
      fg.entry('r');
      await clock.advance(100);
      expect(fg.circuitState('r')).toMatchObject([{ state: 'halfOpen', retryAfterMs: 900 }]);
    });
  });

  describe('several breakers on one resource', () => {
    const FAST: CircuitBreakerRuleOptions = { ...ONE_ERROR_OPENS, retryTimeoutMs: 1000 };
    const SLOW: CircuitBreakerRuleOptions = {
      ...ONE_ERROR_OPENS,
      strategy: 'errorRatio',
      threshold: 0.5,
      retryTimeoutMs: 3000,
    };

    it('refuses the call while any breaker is open', () => {
      const { fg } = setup([FAST, { ...SLOW, minRequestAmount: 2 }]);
      fail(fg); // opens FAST only
      expect(stateOf(fg)).toEqual(['open', 'closed']);
      expect(fg.tryEntry('r')).toMatchObject({ code: 'ERR_CIRCUIT_OPEN', rule: { strategy: 'errorCount' } });
    });

    it('releases a probe refused by a later breaker as failed, reopening for a fresh retryTimeoutMs', async () => {
      const { fg, clock, events } = setup([FAST, SLOW]);
      fail(fg); // opens both
      await clock.advance(1000);
      expect(fg.tryEntry('r')).toMatchObject({
        code: 'ERR_CIRCUIT_OPEN',
        rule: { strategy: 'errorRatio' },
        retryAfterMs: 2000,
      });
      expect(events.slice(-2)).toMatchObject([
        { rule: { strategy: 'errorCount' }, from: 'open', to: 'halfOpen', value: undefined },
        { rule: { strategy: 'errorCount' }, from: 'halfOpen', to: 'open', value: 1 },
      ]);
      expect(fg.circuitState('r')).toMatchObject([
        { state: 'open', retryAfterMs: 1000 },
        { state: 'open', retryAfterMs: 2000 },
      ]);
    });

    it('closes both breakers with one call once both let it through as a probe', async () => {
      const { fg, clock, transitions } = setup([FAST, SLOW]);
      fail(fg);
      await clock.advance(1000);
      fg.tryEntry('r'); // FAST probes, SLOW refuses: FAST reopens until +2000
      await clock.advance(1000);
      fg.tryEntry('r'); // the same again: FAST reopens until +3000
      await clock.advance(1000);
      asEntry(fg.tryEntry('r')).exit();
      expect(stateOf(fg)).toEqual(['closed', 'closed']);
      expect(transitions()).toEqual([
        'errorCount:closed->open',
        'errorRatio:closed->open',
        'errorCount:open->halfOpen',
        'errorCount:halfOpen->open',
        'errorCount:open->halfOpen',
        'errorCount:halfOpen->open',
        'errorCount:open->halfOpen',
        'errorRatio:open->halfOpen',
        'errorCount:halfOpen->closed',
        'errorRatio:halfOpen->closed',
      ]);
    });
  });

  describe('events', () => {
    it('emits every transition in order, with the resource, the rule and the value', async () => {
      const { fg, clock, events } = setup([
        { ...ONE_ERROR_OPENS, strategy: 'errorRatio', threshold: 0.5, minRequestAmount: 2 },
      ]);
      const rule = fg.getRules().circuitBreakers[0];
      succeed(fg);
      fail(fg);
      fail(fg); // 2/3
      await clock.advance(1000);
      fail(fg); // the probe fails
      await clock.advance(1000);
      succeed(fg); // the probe succeeds
      expect(events).toEqual([
        { resource: 'r', rule, ruleId: 'circuitBreaker#0', from: 'closed', to: 'open', value: 2 / 3 },
        { resource: 'r', rule, ruleId: 'circuitBreaker#0', from: 'open', to: 'halfOpen', value: undefined },
        { resource: 'r', rule, ruleId: 'circuitBreaker#0', from: 'halfOpen', to: 'open', value: 1 },
        { resource: 'r', rule, ruleId: 'circuitBreaker#0', from: 'open', to: 'halfOpen', value: undefined },
        { resource: 'r', rule, ruleId: 'circuitBreaker#0', from: 'halfOpen', to: 'closed', value: undefined },
      ]);
    });

    it('sees the new state from inside a listener', () => {
      const { fg } = setup([ONE_ERROR_OPENS]);
      const seen: string[][] = [];
      fg.on('circuitStateChange', () => seen.push(stateOf(fg)));
      fail(fg);
      expect(seen).toEqual([['open']]);
    });
  });
});
