import fc from 'fast-check';
import { MAX_DURATION_MS } from '../../../packages/core/src/kernel/rule-reader';
import { WarmUpTokens } from '../../../packages/core/src/flow/traffic-controllers';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';
import { engineWith, passesUntilBlocked } from './helpers';

/** Passes per second when every second starts with as many calls as the rule admits. */
async function warmUpCurve(seconds: number, rule = { threshold: 10, warmUpPeriodMs: 10_000 }): Promise<number[]> {
  const { fg, clock } = engineWith([{ resource: 'r', behavior: 'warmUp', ...rule }]);
  const curve: number[] = [];
  for (let s = 0; s < seconds; s++) {
    curve.push(passesUntilBlocked(fg, 'r'));
    await clock.advance(1000);
  }
  return curve;
}

describe('warm-up tokens (WarmUpController formulas)', () => {
  it('derives warningToken, maxToken and slope as Sentinel does', () => {
    // warningToken = (int)(10 s × 10) / (3 − 1) = 50; maxToken = 50 + (int)(2 × 10 × 10 / (1 + 3)) = 100;
    // slope = (3 − 1) / 10 / (100 − 50) = 0.004.
    const tokens = new WarmUpTokens(10, 10_000, 3);
    expect(tokens.warningToken).toBe(50);
    expect(tokens.maxToken).toBe(100);
    expect(tokens.slope).toBeCloseTo(0.004, 12);
  });

  it('starts cold, with maxToken stored, admitting threshold / coldFactor', () => {
    const tokens = new WarmUpTokens(10, 10_000, 3);
    expect(tokens.rate(0, 0)).toBeCloseTo(10 / 3, 12);
    expect(tokens.stored).toBe(100);
  });

  it('syncs at most once per clock second', () => {
    const tokens = new WarmUpTokens(10, 10_000, 3);
    tokens.rate(0, 0);
    tokens.rate(3, 999);
    expect(tokens.stored).toBe(100);
    tokens.rate(3, 1000);
    expect(tokens.stored).toBe(97);
  });
});

describe('QPS warmUp', () => {
  it('climbs from threshold / coldFactor to the threshold over the warm-up period', async () => {
    // Stored tokens fall by the previous second's passes (100, 97, 94, 91, 88, 85, 81, 77, 73,
    // 68, 63, 57, 50, 40 ...); the rate is 1 / ((stored − 50) × 0.004 + 1/10) above 50 tokens.
    expect(await warmUpCurve(15)).toEqual([3, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6, 7, 10, 10, 10]);
  });

  it('stays at the full rate under steady traffic', async () => {
    const curve = await warmUpCurve(40);
    expect(curve.slice(12)).toEqual(new Array(28).fill(10));
  });

  it('goes cold again after a long idle period', async () => {
    const { fg, clock } = engineWith([{ resource: 'r', behavior: 'warmUp', threshold: 10, warmUpPeriodMs: 10_000 }]);
    for (let s = 0; s < 14; s++) {
      passesUntilBlocked(fg, 'r');
      await clock.advance(1000);
    }
    expect(passesUntilBlocked(fg, 'r')).toBe(10);
    await clock.advance(60_000);
    expect(passesUntilBlocked(fg, 'r')).toBe(3);
  });

  it('uses the cold factor given', async () => {
    // coldFactor 5: warningToken = 100 / 4 = 25, maxToken = 25 + 200 / 6 = 58; cold rate = 10 / 5.
    const { fg } = engineWith([
      { resource: 'r', behavior: 'warmUp', threshold: 10, warmUpPeriodMs: 10_000, coldFactor: 5 },
    ]);
    expect(passesUntilBlocked(fg, 'r')).toBe(2);
  });

  it('admits threshold / coldFactor from cold even when the rate computes one ulp under it (Math.nextUp, as Sentinel)', () => {
    // 117 / 3: warningToken 58, maxToken 116; 1 / (58 × slope + 1/117) = 38.99999999999999.
    const { fg } = engineWith([{ resource: 'r', behavior: 'warmUp', threshold: 117, warmUpPeriodMs: 1000 }]);
    expect(passesUntilBlocked(fg, 'r')).toBe(39);
  });

  it('acts as reject when the warm-up period is too short to hold any tokens', () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'warmUp', threshold: 1, warmUpPeriodMs: 1000 }]);
    expect(passesUntilBlocked(fg, 'r')).toBe(1);
  });

  it('blocks everything at threshold 0', () => {
    const { fg } = engineWith([{ resource: 'r', behavior: 'warmUp', threshold: 0, warmUpPeriodMs: 1000 }]);
    expect(passesUntilBlocked(fg, 'r')).toBe(0);
  });
});

describe('WarmUpTokens.sync, as Sentinel syncToken', () => {
  it('refills above the warning line only while the previous second was quiet, and not at all exactly on it', () => {
    // 10/s warming over 10 s, cold factor 3: warningToken 50, maxToken 100; "quiet" is under 3 passes a second.
    const tokens = new WarmUpTokens(10, 10_000, 3);
    expect([tokens.warningToken, tokens.maxToken]).toEqual([50, 100]);
    tokens.rate(0, 0);
    expect(tokens.stored).toBe(100);
    tokens.rate(30, 1000); // busy, above the line: no refill, the passes drain
    expect(tokens.stored).toBe(70);
    tokens.rate(0, 2000); // quiet, above the line: one second of refill (10)
    expect(tokens.stored).toBe(80);
    tokens.rate(30, 3000); // busy again: no refill
    expect(tokens.stored).toBe(50);
    tokens.rate(0, 4000); // exactly on the line, quiet: neither branch refills
    expect(tokens.stored).toBe(50);
    tokens.rate(0, 5000); // still on it
    expect(tokens.stored).toBe(50);
  });
});

describe('warm-up tokens with extreme numbers (#24)', () => {
  it('admits no more than the threshold at the warning line, where nextUp of the rate passes it by an ulp', () => {
    // 2.9999999999999996 warming over 1 s, cold factor 1.5: warningToken 4, maxToken 6. On the
    // line the rate computed is nextUp(2.9999999999999996) = 3, which let a third call through.
    const threshold = 2.9999999999999996;
    const tokens = new WarmUpTokens(threshold, 1000, 1.5);
    expect([tokens.warningToken, tokens.maxToken]).toEqual([4, 6]);
    const rates: number[] = [];
    for (let second = 0; second < 10; second++)
      rates.push(tokens.rate(second % 3 === 0 ? 0 : threshold, second * 1000));
    expect(rates.filter((rate) => rate > threshold)).toEqual([]);
    expect(rates).toContain(threshold);
  });

  it('has a slope of 0, not Infinity, when the bucket has no room above the warning line', () => {
    for (const [threshold, coldFactor] of [
      [0, 3],
      [1e-300, 3],
      [5, 1e308],
    ] as const) {
      const tokens = new WarmUpTokens(threshold, 1000, coldFactor);
      expect([tokens.warningToken, tokens.maxToken, tokens.slope]).toEqual([0, 0, 0]);
    }
  });

  const RUNS = 300;
  it(
    'keeps every derived number finite, and the rate within (0, threshold], for any valid rule and traffic',
    () => {
      const threshold = fc.oneof(
        fc.constantFrom(5e-324, 1e-310, 4.656612875245797e-7, 0.5, 1, 2.9999999999999996, 117, 2 ** 31, 2 ** 53 - 1),
        fc.double({ min: 5e-324, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
      );
      const coldFactor = fc.oneof(
        fc.constantFrom(1 + 2 ** -52, 1.5, 3, 1e15, 1e308),
        fc.double({ min: 1, max: 1e308, noNaN: true, minExcluded: true }),
      );
      const warmUpPeriodMs = fc.oneof(
        fc.constantFrom(5e-324, 0.5, 1000, MAX_DURATION_MS),
        fc.double({ min: 5e-324, max: MAX_DURATION_MS, noNaN: true }),
      );
      const second = fc.record({
        gapMs: fc.constantFrom(0, 1, 999, 1000, 1001, 60_000, MAX_DURATION_MS),
        passed: fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: Number.MAX_SAFE_INTEGER, noNaN: true })),
      });
      fc.assert(
        fc.property(threshold, warmUpPeriodMs, coldFactor, fc.array(second, { maxLength: 30 }), (t, w, c, seconds) => {
          const tokens = new WarmUpTokens(t, w, c);
          for (const n of [tokens.warningToken, tokens.maxToken, tokens.slope]) expect(Number.isFinite(n)).toBe(true);
          let now = 10_000;
          for (const { gapMs, passed } of seconds) {
            now += gapMs;
            const rate = tokens.rate(passed, now);
            expect(Number.isFinite(tokens.stored)).toBe(true);
            expect(rate > 0 && rate <= t).toBe(true);
            // warmUpThrottle (a threshold of 0 or >= 1000 / MAX_DURATION_MS): a pacing interval at
            // this rate is a finite number for any acquireCount.
            if (t >= 1000 / MAX_DURATION_MS)
              expect(Number.isFinite((1000 * Number.MAX_SAFE_INTEGER) / rate)).toBe(true);
          }
        }),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
