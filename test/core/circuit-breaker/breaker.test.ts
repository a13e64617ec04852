import fc from 'fast-check';
import {
  BreakerProbe,
  BreakerStateMachine,
  BreakerWindow,
  type PassDecision,
} from '../../../packages/core/src/circuit-breaker/breaker';
import type { CircuitBreakerRule, CircuitState } from '../../../packages/core/src/circuit-breaker/circuit-breaker-rule';
import { createBreakerStrategy, type BreakerStrategy } from '../../../packages/core/src/circuit-breaker/strategies';

type Transition = [CircuitState, CircuitState, number | undefined];

function rule(overrides: Partial<CircuitBreakerRule> = {}): CircuitBreakerRule {
  return {
    resource: 'r',
    strategy: 'errorCount',
    threshold: 0,
    minRequestAmount: 1,
    statIntervalMs: 60_000,
    bucketCount: 1,
    retryTimeoutMs: 1000,
    halfOpenProbes: 1,
    ...overrides,
  };
}

function machineFor(r: CircuitBreakerRule, strategy: BreakerStrategy = createBreakerStrategy(r)) {
  const transitions: Transition[] = [];
  const machine = new BreakerStateMachine(r, strategy, (from, to, value) => transitions.push([from, to, value]));
  return { machine, transitions };
}

function asProbe(decision: PassDecision): BreakerProbe {
  if (!(decision instanceof BreakerProbe)) throw new Error(`expected a probe, got ${String(decision)}`);
  return decision;
}

/** A probe's call ends as the engine ends it: recorded first, then settled. */
function finishProbe(
  machine: BreakerStateMachine,
  probe: BreakerProbe,
  now: number,
  rtMs: number,
  error: boolean,
): void {
  machine.onComplete(now, rtMs, error);
  machine.probeExited(probe, now, rtMs, error);
}

/** Opens a fresh errorCount breaker (threshold 0) with one failed call at `now`. */
function openedAt(now: number, overrides: Partial<CircuitBreakerRule> = {}) {
  const made = machineFor(rule(overrides));
  made.machine.onComplete(now, 5, true);
  return made;
}

describe('BreakerStateMachine', () => {
  it('starts closed and lets calls through', () => {
    const { machine } = machineFor(rule());
    expect(machine.state).toBe('closed');
    expect(machine.tryPass(0)).toBeUndefined();
  });

  it('does not consult the strategy while the window holds fewer than minRequestAmount calls', () => {
    const alwaysTrips: BreakerStrategy = { trip: () => 42 };
    const { machine } = machineFor(rule({ minRequestAmount: 3 }), alwaysTrips);
    machine.onComplete(0, 1, false);
    machine.onComplete(1, 1, false);
    expect(machine.state).toBe('closed');
  });

  it('opens with the value the strategy tripped on once minRequestAmount calls are in the window', () => {
    const alwaysTrips: BreakerStrategy = { trip: () => 42 };
    const { machine, transitions } = machineFor(rule({ minRequestAmount: 3 }), alwaysTrips);
    for (let t = 0; t < 3; t++) machine.onComplete(t, 1, false);
    expect(transitions).toEqual([['closed', 'open', 42]]);
  });

  it('refuses calls until retryTimeoutMs after opening, with the time left', () => {
    const { machine } = openedAt(100);
    expect(machine.tryPass(100)).toBe(1000);
    expect(machine.tryPass(1099)).toBe(1);
  });

  it('lets the first call at retryTimeoutMs through as a probe and goes half-open', () => {
    const { machine, transitions } = openedAt(100);
    expect(machine.tryPass(1100)).toBeInstanceOf(BreakerProbe);
    expect(transitions.at(-1)).toEqual(['open', 'halfOpen', undefined]);
  });

  it('refuses other calls while the probe runs, until the probe would time out', () => {
    const { machine } = openedAt(100);
    machine.tryPass(1100);
    expect(machine.tryPass(1300)).toBe(800);
  });

  it('closes when the probe succeeds', () => {
    const { machine, transitions } = openedAt(100);
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1150, 50, false);
    expect(machine.state).toBe('closed');
    expect(transitions.at(-1)).toEqual(['halfOpen', 'closed', undefined]);
  });

  it('empties its window on closing', () => {
    const { machine } = openedAt(100, { threshold: 1 });
    machine.onComplete(101, 5, true); // count 2 > 1: open
    finishProbe(machine, asProbe(machine.tryPass(1101)), 1102, 1, false);
    machine.onComplete(1103, 5, true); // 1 error in a fresh window
    expect(machine.state).toBe('closed');
  });

  it('reopens for a fresh retryTimeoutMs when the probe fails', () => {
    const { machine, transitions } = openedAt(100);
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1400, 300, true);
    expect(transitions.at(-1)).toEqual(['halfOpen', 'open', 1]);
    expect(machine.tryPass(2399)).toBe(1);
    expect(machine.tryPass(2400)).toBeInstanceOf(BreakerProbe);
  });

  it('counts a slow probe as failed when the rule has maxAllowedRtMs', () => {
    const { machine } = machineFor(rule({ strategy: 'slowRequestRatio', threshold: 0, maxAllowedRtMs: 100 }));
    machine.onComplete(100, 101, false); // one slow call: open
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1201, 101, false);
    expect(machine.state).toBe('open');
  });

  it('counts an erroring probe as failed for a slowRequestRatio breaker', () => {
    const { machine } = machineFor(rule({ strategy: 'slowRequestRatio', threshold: 0, maxAllowedRtMs: 100 }));
    machine.onComplete(100, 101, false); // one slow call: open
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1110, 10, true);
    expect(machine.state).toBe('open');
  });

  it('does not count a slow probe as failed when the rule has no maxAllowedRtMs', () => {
    const { machine } = openedAt(100);
    finishProbe(machine, asProbe(machine.tryPass(1100)), 60_000, 58_900, false);
    expect(machine.state).toBe('closed');
  });

  it('reopens for a fresh retryTimeoutMs from the moment a probe is released', () => {
    const { machine, transitions } = openedAt(100);
    machine.probeReleased(asProbe(machine.tryPass(1100)), 1100);
    expect(transitions.at(-1)).toEqual(['halfOpen', 'open', 1]);
    expect(machine.tryPass(2099)).toBe(1);
  });

  it('needs every probe to succeed before closing', () => {
    const { machine } = openedAt(100, { halfOpenProbes: 3 });
    const probes = [1100, 1101, 1102].map((t) => asProbe(machine.tryPass(t)));
    finishProbe(machine, probes[0]!, 1200, 100, false);
    finishProbe(machine, probes[1]!, 1200, 99, false);
    expect(machine.state).toBe('halfOpen');
    finishProbe(machine, probes[2]!, 1200, 98, false);
    expect(machine.state).toBe('closed');
  });

  it('refuses calls beyond halfOpenProbes', () => {
    const { machine } = openedAt(100, { halfOpenProbes: 2 });
    machine.tryPass(1100);
    machine.tryPass(1200);
    expect(machine.tryPass(1300)).toBe(800);
  });

  it('ignores the other probes of a period that one failing probe ended', () => {
    const { machine, transitions } = openedAt(100, { halfOpenProbes: 2 });
    const first = asProbe(machine.tryPass(1100));
    const second = asProbe(machine.tryPass(1100));
    finishProbe(machine, first, 1200, 100, true);
    finishProbe(machine, second, 1300, 200, false);
    expect(machine.state).toBe('open');
    expect(transitions).toHaveLength(3);
  });

  it('ignores a probe of an earlier half-open period while a new one runs', () => {
    const { machine } = openedAt(100, { halfOpenProbes: 2 });
    const stale = asProbe(machine.tryPass(1100));
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1200, 100, true); // reopens until 2200
    const fresh = asProbe(machine.tryPass(2200));
    finishProbe(machine, stale, 2300, 1200, false);
    finishProbe(machine, fresh, 2300, 100, false);
    expect(machine.state).toBe('halfOpen');
  });

  it('ignores the release of a probe of an earlier half-open period (its call cancelled late)', () => {
    const { machine, transitions } = openedAt(100, { halfOpenProbes: 2 });
    const stale = asProbe(machine.tryPass(1100));
    finishProbe(machine, asProbe(machine.tryPass(1100)), 1200, 100, true); // reopens until 2200
    asProbe(machine.tryPass(2200));
    machine.probeReleased(stale, 2300);
    expect(machine.state).toBe('halfOpen');
    expect(transitions.at(-1)).toEqual(['open', 'halfOpen', undefined]);
  });

  it('does not let a call that was not a probe decide the half-open period', () => {
    const { machine } = openedAt(100);
    machine.tryPass(1100);
    machine.onComplete(1200, 1, false);
    expect(machine.state).toBe('halfOpen');
  });

  it('fails a probe still running retryTimeoutMs after it started, reopening at that deadline', () => {
    const { machine, transitions } = openedAt(100);
    machine.tryPass(1100);
    expect(machine.tryPass(2099)).toBe(1);
    expect(machine.tryPass(2100)).toBe(1000);
    expect(transitions.at(-1)).toEqual(['halfOpen', 'open', 1]);
  });

  it('probes again at once when a timed-out probe is noticed a full retryTimeoutMs late', () => {
    const { machine, transitions } = openedAt(100);
    machine.tryPass(1100);
    expect(machine.tryPass(3100)).toBeInstanceOf(BreakerProbe);
    expect(transitions.slice(-2)).toEqual([
      ['halfOpen', 'open', 1],
      ['open', 'halfOpen', undefined],
    ]);
  });

  it('ignores the late completion of a timed-out probe', () => {
    const { machine } = openedAt(100);
    const zombie = asProbe(machine.tryPass(1100));
    machine.tryPass(2100);
    finishProbe(machine, zombie, 2500, 1400, false);
    expect(machine.state).toBe('open');
  });

  it('notices a timed-out probe when asked for its status', () => {
    const { machine } = openedAt(100);
    machine.tryPass(1100);
    expect(machine.status(2100)).toMatchObject({ state: 'open', retryAfterMs: 1000 });
  });

  it('reports retryAfterMs 0 once an open breaker is due to probe', () => {
    const { machine } = openedAt(100);
    expect(machine.status(5000)).toMatchObject({ state: 'open', retryAfterMs: 0 });
  });

  it('reports no retryAfterMs while half-open with probes left', () => {
    const { machine } = openedAt(100, { halfOpenProbes: 2 });
    machine.tryPass(1100);
    expect(machine.status(1200)).toEqual({ rule: machine.rule, state: 'halfOpen' });
  });

  it('reports the time until the oldest probe times out while half-open with every probe taken', () => {
    const { machine } = openedAt(100, { halfOpenProbes: 2 });
    machine.tryPass(1100);
    machine.tryPass(1300);
    expect(machine.status(1400)).toMatchObject({ state: 'halfOpen', retryAfterMs: 700 });
  });
});
describe('BreakerStateMachine with a retryTimeoutMs the clock cannot resolve (#24)', () => {
  // At 10 s a double resolves about 1.8e-12 ms: 10_000 + 1e-310 is 10_000.
  it.each([1e-310, 5e-324, 1e-13])(
    'stays open at the instant it opened for %s ms, and probes after it',
    (retryTimeoutMs) => {
      const { machine } = openedAt(10_000, { retryTimeoutMs });
      expect(machine.tryPass(10_000)).toBe(retryTimeoutMs);
      expect(machine.status(10_000)).toMatchObject({ state: 'open', retryAfterMs: retryTimeoutMs });
      expect(asProbe(machine.tryPass(10_000.001))).toBeInstanceOf(BreakerProbe);
    },
  );

  it('holds its one probe at the instant it was let through, instead of releasing it as timed out for the next call', () => {
    const { machine, transitions } = openedAt(10_000, { retryTimeoutMs: 1e-310 });
    asProbe(machine.tryPass(10_001));
    for (let i = 0; i < 5; i++) expect(machine.tryPass(10_001)).toBe(1e-310);
    expect(transitions).toEqual([
      ['closed', 'open', 1],
      ['open', 'halfOpen', undefined],
    ]);
  });
});

describe('BreakerWindow', () => {
  it('counts completed, slow and failed calls', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_000, false, false);
    window.record(10_100, true, false);
    window.record(10_200, true, true);
    expect({ ...window.counts(10_300) }).toEqual({ total: 3, slow: 2, error: 1 });
  });

  it('with one bucket, forgets the previous interval as soon as the next one starts', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_999, false, true);
    expect({ ...window.counts(11_000) }).toEqual({ total: 0, slow: 0, error: 0 });
  });

  it('with several buckets, slides one bucket at a time', () => {
    const window = new BreakerWindow(2, 1000);
    window.record(10_400, false, true);
    window.record(10_600, false, true);
    expect(window.counts(10_999).error).toBe(2);
    expect(window.counts(11_000).error).toBe(1);
    expect(window.counts(11_500).error).toBe(0);
  });

  it('returns, when asked to read, the counts at the instant it recorded, that call included', () => {
    const window = new BreakerWindow(2, 1000);
    window.record(10_400, true, false);
    expect(window.record(10_600, false, true)).toBeUndefined();
    expect({ ...window.record(11_200, false, true, true) }).toEqual({ total: 2, slow: 0, error: 2 });
    expect({ ...window.counts(11_200) }).toEqual({ total: 2, slow: 0, error: 2 });
  });

  it('with one bucket, reads the counts it recorded into, that interval only', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_100, true, false);
    expect({ ...window.record(10_900, false, true, true) }).toEqual({ total: 2, slow: 1, error: 1 });
    expect({ ...window.record(11_000, false, false, true) }).toEqual({ total: 1, slow: 0, error: 0 });
  });

  it('reads, on record and after, the calls of the buckets in the window, whatever the buckets and times', () => {
    const call = fc.record({ gapMs: fc.integer({ min: 0, max: 1500 }), slow: fc.boolean(), error: fc.boolean() });
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 4), fc.array(call, { minLength: 1, maxLength: 60 }), (buckets, calls) => {
        const window = new BreakerWindow(buckets, 1000);
        const bucketMs = 1000 / buckets;
        const recorded: { at: number; slow: boolean; error: boolean }[] = [];
        let now = 10_000;
        for (const { gapMs, slow, error } of calls) {
          now += gapMs;
          recorded.push({ at: Math.floor(now / bucketMs) * bucketMs, slow, error });
          // The model: every call whose bucket started within the last interval (the bucket
          // starting an interval ago is the one `now` reuses).
          const counted = recorded.filter((c) => c.at > now - 1000);
          const expected = {
            total: counted.length,
            slow: counted.filter((c) => c.slow).length,
            error: counted.filter((c) => c.error).length,
          };
          expect({ ...window.record(now, slow, error, true) }).toEqual(expected);
          expect({ ...window.counts(now) }).toEqual(expected);
        }
      }),
    );
  });

  it('is empty after a reset', () => {
    const window = new BreakerWindow(1, 1000);
    window.record(10_000, true, true);
    window.reset();
    expect({ ...window.counts(10_001) }).toEqual({ total: 0, slow: 0, error: 0 });
  });
});
