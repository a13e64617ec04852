import fc from 'fast-check';
import { Floodgate, isBlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { ClusterFixture, T0 } from './support/cluster-fixture';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { testRedisUrl } from '../support/test-services';

// The Lua token bucket against core's local hotspot token bucket (refillTokens and the reject
// checker): the same calls at the same times pass or are refused alike, with the same
// retryAfterMs, including thresholds and durations whose products overflow 2^53.

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeAll(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:exactness:${process.pid}`);
});
afterAll(async () => {
  await fixture.close();
});

interface Case {
  readonly threshold: number;
  readonly burstCount: number;
  readonly durationMs: number;
  readonly steps: readonly { readonly advanceMs: number; readonly acquireCount: number }[];
}

/** Thresholds and durations from small to near the limits (products far beyond 2^53). */
const big = (max: number): fc.Arbitrary<number> =>
  fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max }));

/**
 * Threshold and duration: independent, or equal and large (a refill's `elapsed × threshold` is
 * then beyond 2^53 while its quotient is near a whole number, where doubles floor wrong).
 */
const sizes = fc.oneof(
  fc.record({
    threshold: big(2 ** 45),
    burstCount: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 })),
    durationMs: fc.oneof(big(2 ** 40), fc.double({ min: 0.5, max: 5000, noNaN: true })),
  }),
  fc
    .record({ size: fc.integer({ min: 2 ** 30, max: 2 ** 45 }), burstCount: fc.integer({ min: 1, max: 60 }) })
    .map(({ size, burstCount }) => ({ threshold: size, burstCount, durationMs: size })),
);

const cases: fc.Arbitrary<Case> = sizes.chain(({ threshold, burstCount, durationMs }) =>
  fc.record({
    threshold: fc.constant(threshold),
    burstCount: fc.constant(burstCount),
    durationMs: fc.constant(durationMs),
    steps: fc.array(
      fc.record({
        // Within a duration, just past one, or many durations later (integer times).
        advanceMs: fc.oneof(
          fc.integer({ min: 0, max: Math.max(1, Math.floor(durationMs)) }),
          fc.integer({ min: Math.floor(durationMs), max: Math.floor(durationMs) + 60 }),
          fc.integer({ min: Math.floor(durationMs), max: Math.floor(durationMs * 2) }),
          fc.integer({ min: 0, max: Math.min(2 ** 48, Math.floor(durationMs * 7)) }),
        ),
        // A few tokens, any number, or nearly the whole bucket (a refill then decides).
        acquireCount: fc.oneof(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: threshold + burstCount }),
          fc.integer({ min: Math.max(1, threshold + burstCount - 70), max: threshold + burstCount }),
        ),
      }),
      { minLength: 1, maxLength: 12 },
    ),
  }),
);

/** 'pass', or 'block' with its retryAfterMs. */
type Outcome = ['pass'] | ['block', number | undefined];

describe('the Lua token bucket', () => {
  it('refills exactly where elapsed × threshold is beyond 2^53 (doubles would floor one token short)', async () => {
    // 7,217,655,363,748 × 7,217,655,363,731 rounds down in doubles, so ⌊elapsed × threshold /
    // durationMs⌋ came out one short of the exact 7,217,655,363,748.
    const size = 7_217_655_363_731;
    const clock = new ManualClock(T0);
    const backend = await fixture.backend({ now: () => clock.now() });
    const shared = new Floodgate({ clock, cluster: backend });
    const rule = { resource: `r${n++}`, paramIndex: 0, threshold: size, burstCount: 60, durationMs: size };
    shared.loadHotParamRules([{ ...rule, cluster: { thresholdType: 'global' } }]);
    (await shared.enter(rule.resource, { args: ['v'], acquireCount: size + 55 })).exit();
    await clock.advance(size + 17);
    // 5 left + size + 17 refilled = size + 22, below the bucket's size + 60.
    (await shared.enter(rule.resource, { args: ['v'], acquireCount: size + 22 })).exit();
    await expect(shared.enter(rule.resource, { args: ['v'], acquireCount: 1 })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
    });
  });

  it(
    'decides every call as core’s local hotspot token bucket does',
    async () => {
      // One backend; each case runs on a clock of its own, read by the backend as the shared time.
      let clock = new ManualClock(T0);
      const backend = await fixture.backend({ now: () => clock.now() });
      await fc.assert(
        fc.asyncProperty(cases, async ({ threshold, burstCount, durationMs, steps }) => {
          clock = new ManualClock(T0);
          const rule = { resource: `r${n++}`, paramIndex: 0, threshold, burstCount, durationMs };
          const local = new Floodgate({ clock });
          local.loadHotParamRules([rule]);
          const shared = new Floodgate({ clock, cluster: backend });
          shared.loadHotParamRules([{ ...rule, cluster: { thresholdType: 'global' } }]);
          let at = 0;
          for (const { advanceMs, acquireCount } of steps) {
            at += advanceMs;
            await clock.advance(advanceMs);
            const options = { args: ['v'], acquireCount };
            const expected = outcomeOf(local.tryEntry(rule.resource, options));
            let actual: Outcome;
            try {
              (await shared.enter(rule.resource, options)).exit();
              actual = ['pass'];
            } catch (error) {
              if (!isBlockError(error)) throw error;
              actual = ['block', error.retryAfterMs];
            }
            expect({ at, acquireCount, outcome: actual }).toEqual({ at, acquireCount, outcome: expected });
          }
        }),
        propertyRuns(150),
      );
    },
    propertyTimeoutMs(150),
  );
});

function outcomeOf(result: unknown): Outcome {
  if (isBlockError(result)) return ['block', result.retryAfterMs];
  (result as { exit(): void }).exit();
  return ['pass'];
}
