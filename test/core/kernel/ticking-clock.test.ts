import { setImmediate as yieldToLoop } from 'node:timers/promises';
import fc from 'fast-check';
import { Floodgate } from '../../../packages/core/src';
import {
  shouldTick,
  TICK_CHECK_MS,
  TICKING_CLOCK_DEFAULTS,
  tickingClock,
  type TickingClock,
} from '../../../packages/core/src/kernel/ticking-clock';

/**
 * The clock's ticks are real time from a real worker thread, so these tests wait for what the
 * clock does (it starts ticking, its worker writes a time, it goes idle) and never for a length
 * of time; the bound only turns a clock that never does it into a failure that says so.
 */
const NEVER_MS = 30_000;

/** Reads `clock` without pause until it ticks (it judges the rate every TICK_CHECK_MS of reads). */
function readUntilTicking(clock: TickingClock): number[] {
  const times: number[] = [];
  const started = performance.now();
  while (!clock.ticking) {
    times.push(clock.now());
    if (performance.now() - started > NEVER_MS) throw new Error('the clock never started ticking under load');
  }
  return times;
}

/** Yields to the event loop until `done()`, reading `clock` between yields if `read`. */
async function until(what: string, done: () => boolean, read?: TickingClock): Promise<number[]> {
  const times: number[] = [];
  const started = performance.now();
  while (!done()) {
    if (read !== undefined) times.push(read.now());
    if (performance.now() - started > NEVER_MS) throw new Error(`never: ${what}`);
    await yieldToLoop();
  }
  return times;
}

function expectNonDecreasing(times: readonly number[]): void {
  for (let i = 1; i < times.length; i++)
    if (times[i]! < times[i - 1]!) expect([times[i - 1], times[i]]).toBe('ordered');
}

describe('shouldTick (the read-rate policy)', () => {
  const options = { tickAboveReadsPerSecond: 1000, idleBelowReadsPerSecond: 500 };

  it('starts above tickAbove, stops below idleBelow, and between them stays as it was', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (ticking, reads, elapsedMs, a, b) => {
          const o = { tickAboveReadsPerSecond: Math.max(a, b), idleBelowReadsPerSecond: Math.min(a, b) };
          const perSecond = (reads * 1000) / elapsedMs;
          const next = shouldTick(ticking, reads, elapsedMs, o);
          if (perSecond > o.tickAboveReadsPerSecond) expect(next).toBe(true);
          else if (perSecond < o.idleBelowReadsPerSecond) expect(next).toBe(false);
          else expect(next).toBe(ticking);
        },
      ),
    );
  });

  it('reads the rate per second of the period', () => {
    expect(shouldTick(false, 251, 250, options)).toBe(true); // 1004 reads/s
    expect(shouldTick(false, 250, 250, options)).toBe(false); // 1000 reads/s: not above
    expect(shouldTick(true, 125, 250, options)).toBe(true); // 500 reads/s: not below
    expect(shouldTick(true, 124, 250, options)).toBe(false);
  });
});

describe('tickingClock', () => {
  const clocks: TickingClock[] = [];
  const make = (options: Parameters<typeof tickingClock>[0]): TickingClock => {
    const clock = tickingClock(options);
    clocks.push(clock);
    return clock;
  };
  afterEach(async () => {
    await Promise.all(clocks.splice(0).map((clock) => clock.close()));
  });

  it('rejects options it cannot honour, naming them', () => {
    expect(() => tickingClock({ tickAboveReadsPerSecond: -1 })).toThrow(
      'tickingClock: tickAboveReadsPerSecond must be a finite number >= 0, got -1',
    );
    expect(() => tickingClock({ idleBelowReadsPerSecond: Number.NaN })).toThrow('idleBelowReadsPerSecond');
    expect(() => tickingClock({ tickAboveReadsPerSecond: 10, idleBelowReadsPerSecond: 20 })).toThrow(
      'idleBelowReadsPerSecond (20) must be at most tickAboveReadsPerSecond (10)',
    );
    expect(() => tickingClock(null as never)).toThrow('tickingClock options must be an object');
    expect(TICKING_CLOCK_DEFAULTS).toEqual({ tickAboveReadsPerSecond: 100_000, idleBelowReadsPerSecond: 50_000 });
  });

  it('reads performance.now() while the rate is below tickAbove', async () => {
    const clock = make({ tickAboveReadsPerSecond: Number.MAX_VALUE, idleBelowReadsPerSecond: 0 });
    const started = performance.now();
    const times: number[] = [];
    // more than one check period of reads, all precise
    while (performance.now() - started < 2 * TICK_CHECK_MS) {
      const before = performance.now();
      const at = clock.now();
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(performance.now());
      times.push(at);
    }
    expect(clock.ticking).toBe(false);
    expectNonDecreasing(times);
    await clock.close();
  });

  it('under load, returns a time the worker keeps current: never ahead of performance.now(), never backwards', async () => {
    const clock = make({ tickAboveReadsPerSecond: 1, idleBelowReadsPerSecond: 0 });
    const times = readUntilTicking(clock);
    const switchedAt = clock.now();
    // the worker's first write moves the time on
    times.push(...(await until('the worker wrote a tick', () => clock.now() > switchedAt, clock)));
    for (let i = 0; i < 50; i++) {
      const at = clock.now();
      times.push(at);
      expect(at).toBeLessThanOrEqual(performance.now());
      // a tick is at most a tick behind on a quiet machine; the bound only catches a wrong scale
      expect(performance.now() - at).toBeLessThan(NEVER_MS);
      await yieldToLoop();
    }
    expect(clock.ticking).toBe(true);
    // reads in a row return the tick (one value for about a millisecond), not a precise time each
    const burst = Array.from({ length: 1000 }, () => clock.now());
    expect(new Set(burst).size).toBeLessThan(burst.length / 2);
    times.push(...burst);
    await clock.close();
    expect(clock.ticking).toBe(false);
    times.push(clock.now(), clock.now());
    expectNonDecreasing(times);
  });

  it('stops ticking when reads stop, and ticks again when they come back', async () => {
    const clock = make({ tickAboveReadsPerSecond: 1, idleBelowReadsPerSecond: 0 });
    readUntilTicking(clock);
    // no reads: the worker sees no check for two periods and goes idle by itself
    await until('the worker went idle once reads stopped', () => !clock.ticking);
    const before = performance.now();
    expect(clock.now()).toBeGreaterThanOrEqual(before); // precise again
    readUntilTicking(clock);
    expect(clock.ticking).toBe(true);
  });

  it('stops ticking when the rate falls below idleBelow', async () => {
    // reads without pause come far faster than 10,000 a second; one per timer turn, far slower
    const clock = make({ tickAboveReadsPerSecond: 10_000, idleBelowReadsPerSecond: 10_000 });
    readUntilTicking(clock);
    const started = performance.now();
    while (clock.ticking) {
      clock.now();
      if (performance.now() - started > NEVER_MS) throw new Error('never: the clock went idle at a low read rate');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(clock.ticking).toBe(false);
  });

  it('is a clock the engine takes', () => {
    const clock = make({ tickAboveReadsPerSecond: 1, idleBelowReadsPerSecond: 0 });
    const fg = new Floodgate({ clock });
    fg.loadRules({ flow: [{ resource: 'r', threshold: 1 }] });
    readUntilTicking(clock);
    const entry = fg.entry('r');
    expect(entry.createdAt).toBeLessThanOrEqual(performance.now());
    entry.exit();
  });
});
