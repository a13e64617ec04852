import fc from 'fast-check';
import { Entry, FlowBlockError, Floodgate } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { ADAPTIVE_LIMIT_DEFAULTS, AdaptiveLimit } from '../../../packages/core/src/flow/adaptive-limit';
import { PASS } from '../../../packages/core/src/flow/traffic-controllers';
import { StatisticNode } from '../../../packages/core/src/kernel/statistic-node';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/**
 * A limit driven by hand: `wave(t, rt)` admits calls at time `t` until the limit refuses one,
 * then ends them all at `t + rt`, as a resource under more load than it admits would see.
 */
function harness(initial = 20, minLimit = 5, maxLimit = 1000) {
  const limit = new AdaptiveLimit(initial, minLimit, maxLimit);
  const node = new StatisticNode();
  const admit = (now: number): boolean => {
    if (limit.tryPass(node, 1, now) !== PASS) return false;
    node.concurrency++;
    return true;
  };
  const end = (startedAt: number, now: number): void => {
    node.concurrency--;
    limit.exited({ createdAt: startedAt } as Entry, now, now - startedAt);
  };
  /** Admits up to `most` calls at `t` (until refused), ends them at `t + rt`; returns how many were admitted. */
  const wave = (t: number, rt: number, most = Number.POSITIVE_INFINITY): number => {
    let admitted = 0;
    while (admitted < most && admit(t)) admitted++;
    for (let i = 0; i < admitted; i++) end(t, t + rt);
    return admitted;
  };
  /** Measures the no-load response time: waves of `minLimit` calls of `rt` ms until the measurement ends; returns the time after. */
  const measure = (t: number, rt: number): number => {
    while (limit.measuringMinRtt) {
      wave(t, rt);
      t += rt;
    }
    return t;
  };
  return { limit, node, admit, end, wave, measure };
}

describe('AdaptiveLimit', () => {
  it('measures the no-load response time at minLimit first, then starts from the initial limit', () => {
    const { limit, wave, measure } = harness(20, 5);
    expect(wave(0, 10)).toBe(5);
    expect(limit.measuringMinRtt).toBe(true);
    const t = measure(10, 10);
    expect(t).toBe(100); // 50 samples in waves of 5
    expect(limit.minRttMs).toBe(10);
    expect(wave(t, 10)).toBe(20);
  });

  it('grows while response times stay at their minimum: limit × gradient (at most 2, here 1.25) + √ of it', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 10; i++, t += 10) expect(wave(t, 10)).toBe(20); // the window closes at the first exit at t = 200
    expect(wave(t, 10)).toBe(30); // 20 × 1.25 = 25, + √25
  });

  it('still grows, by √limit, while response times stay within 25 % of their minimum', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 8; i++, t += 12.5) wave(t, 12.5);
    expect(wave(t, 12.5)).toBe(24); // gradient 1: 20 + √20
  });

  it('shrinks when response times rise, at most halving per window', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 3; i++, t += 40) expect(wave(t, 40)).toBe(20);
    expect(wave(t, 40)).toBe(13); // gradient 12.5 / 40 clamped to 0.5: 10 + √10
  });

  it('never goes past maxLimit or below minLimit', () => {
    const { wave, measure } = harness(20, 5, 25);
    let t = measure(0, 10);
    for (let i = 0; i < 30; i++, t += 10) wave(t, 10);
    expect(wave(t, 10)).toBe(25);
    for (let i = 0; i < 12; i++, t += 100) wave(t, 100);
    expect(wave(t, 100)).toBe(5);
  });

  it('leaves the limit alone over a window whose calls never reached half of it (app-limited)', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 12; i++, t += 10) wave(t, 10, 9);
    expect(wave(t, 10)).toBe(20);
  });

  it('needs 10 completions in a window, however long it lasts', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    t += 500;
    for (let i = 0; i < 9; i++, t += 10) wave(t, 10, 1); // 9 completions over 590 ms: no update
    expect(wave(t, 10)).toBe(20); // the 10th closes the window: 20 in flight ≥ 20 / 2, so it grows next
    expect(wave(t + 10, 10)).toBe(30);
  });

  it('counts a window whose calls reached exactly half the limit', () => {
    const { wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 10; i++, t += 10) wave(t, 10, 10);
    expect(wave(t, 10)).toBe(30);
  });

  it('judges a window by the most calls it had in flight, not by the last call', () => {
    const { wave, measure } = harness(20, 5);
    const t = measure(0, 10);
    expect(wave(t, 10)).toBe(20);
    wave(t + 100, 10, 1); // one call alone closes the window at t + 110
    expect(wave(t + 110, 10)).toBe(30);
  });

  it('grows when calls take no measurable time (0 ms response times on a coarse clock)', () => {
    const { limit, wave, measure } = harness(20, 5);
    let t = measure(0, 0);
    expect(limit.minRttMs).toBe(0);
    for (let i = 0; i < 2; i++, t += 100) wave(t, 0, 100);
    expect(wave(t, 0, 100)).toBe(46); // gradient 2: 40 + √40
  });

  it('measures the no-load response time again every minute, then returns to the limit it had', () => {
    const { limit, wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    for (let i = 0; i < 11; i++, t += 10) wave(t, 10);
    expect(wave(t, 10)).toBe(30);
    t = 100 + ADAPTIVE_LIMIT_DEFAULTS.minRttIntervalMs;
    expect(wave(t, 20)).toBe(5);
    t = measure(t + 20, 20);
    expect(limit.minRttMs).toBe(20);
    expect(wave(t, 20)).toBe(30);
  });

  it('measures again after five windows in a row at minLimit, and finds the new no-load latency', () => {
    const { limit, wave, measure } = harness(20, 5);
    let t = measure(0, 10);
    let windows = 0;
    while (!limit.measuringMinRtt && windows++ < 100) {
      wave(t, 60);
      t += 60;
    }
    expect(limit.measuringMinRtt).toBe(true);
    t = measure(t, 60);
    expect(limit.minRttMs).toBe(60);
    for (let i = 0; i < 2; i++, t += 60) expect(wave(t, 60)).toBe(5);
    expect(wave(t, 60)).toBe(8); // latency at its (new) minimum again: 5 × 1.25 + √6.25
  });

  it('measures again after exactly five windows in a row at minLimit', () => {
    const { limit, wave, measure } = harness(5, 5);
    let t = measure(0, 10);
    let windows = 0;
    while (!limit.measuringMinRtt && windows < 10) {
      // Two waves of 5 calls of 50 ms: a window of 10 completions over 100 ms, latency 4 × the minimum.
      wave(t, 50);
      wave(t + 50, 50);
      t += 100;
      windows++;
    }
    expect(windows).toBe(5);
  });

  it('does not take calls admitted before a measurement as its samples', () => {
    const { limit, admit, end, wave, measure } = harness(20, 5);
    const heldAt = measure(0, 10);
    admit(heldAt); // held across the next measurement
    const t = heldAt + ADAPTIVE_LIMIT_DEFAULTS.minRttIntervalMs;
    expect(wave(t, 10)).toBe(4); // minLimit 5, one already in flight
    end(heldAt, t + 5); // the held call: 60 s long, not a sample
    measure(t + 10, 10);
    expect(limit.minRttMs).toBe(10);
  });

  it(
    'holds calls in flight to the limit whatever the response times (property)',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 60 })), { maxLength: 150 }),
          (waves) => {
            const { limit, node, wave } = harness(20, 5, 40);
            let t = 0;
            for (const [rt, most] of waves) {
              const before = limit.limit;
              const admitted = wave(t, rt, most);
              expect(admitted).toBeLessThanOrEqual(before);
              expect(limit.limit).toBeGreaterThanOrEqual(5);
              expect(limit.limit).toBeLessThanOrEqual(40);
              expect(node.concurrency).toBe(0);
              t += rt;
            }
          },
        ),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );
});

describe('adaptive flow rules on the engine', () => {
  const rule: FlowRuleOptions = {
    resource: 'GET /work',
    metric: 'concurrency',
    behavior: 'adaptive',
    threshold: 20,
    minLimit: 5,
  };

  function engine(): { fg: Floodgate; clock: ManualClock } {
    const clock = new ManualClock(1000);
    const fg = new Floodgate({ clock });
    fg.loadFlowRules([rule]);
    return { fg, clock };
  }

  /** Enters until refused, ends every admitted call `rtMs` later; returns how many were admitted and the refusal. */
  async function wave(
    fg: Floodgate,
    clock: ManualClock,
    rtMs: number,
  ): Promise<{ admitted: number; refusal: unknown }> {
    const entries: Entry[] = [];
    let result = fg.tryEntry('GET /work');
    while (result instanceof Entry) {
      entries.push(result);
      result = fg.tryEntry('GET /work');
    }
    await clock.advance(rtMs);
    for (const entry of entries) entry.exit();
    return { admitted: entries.length, refusal: result };
  }

  it('refuses past its limit with a capacity FlowBlockError (503 over HTTP)', async () => {
    const { fg, clock } = engine();
    const { admitted, refusal } = await wave(fg, clock, 10);
    expect(admitted).toBe(5);
    expect(refusal).toBeInstanceOf(FlowBlockError);
    expect(refusal).toMatchObject({
      refusal: 'capacity',
      detail: 'The resource is at the concurrency its measured latency allows.',
      retryAfterMs: undefined,
    });
    expect((refusal as FlowBlockError).quota()).toBeUndefined();
  });

  it('learns from the calls that exit through the engine', async () => {
    const { fg, clock } = engine();
    for (let i = 0; i < 10; i++) await wave(fg, clock, 10);
    expect((await wave(fg, clock, 10)).admitted).toBe(20);
  });

  it('takes no sample from a call given back before it ran', async () => {
    const { fg, clock } = engine();
    for (let i = 0; i < 60; i++) fg.entry('GET /work').cancel();
    await clock.advance(10);
    expect((await wave(fg, clock, 10)).admitted).toBe(5);
  });

  it('keeps what it learned across a reload of the unchanged rule, and starts afresh when the rule changes', async () => {
    const { fg, clock } = engine();
    for (let i = 0; i < 10; i++) await wave(fg, clock, 10);
    fg.loadFlowRules([rule]);
    expect((await wave(fg, clock, 10)).admitted).toBe(20);
    fg.loadFlowRules([{ ...rule, maxLimit: 500 }]);
    expect((await wave(fg, clock, 10)).admitted).toBe(5);
  });
});
