import fc from 'fast-check';
import { Entry, Floodgate } from '@floodgate/core';
import type { FlowRuleOptions, HotParamRuleOptions, RolloutOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/** Cases per `npm test` run (FLOODGATE_PROPERTY_RUNS overrides it). */
const RUNS = 150;

/** How a rule is rolled out: enforced, in shadow, or enforced by a share. */
const rollout: fc.Arbitrary<RolloutOptions> = fc.oneof(
  fc.constant({}),
  fc.constant({ mode: 'shadow' as const }),
  fc.integer({ min: 0, max: 99 }).map((enforcePercent) => ({ enforcePercent })),
);

const flowRule: fc.Arbitrary<FlowRuleOptions & RolloutOptions> = fc
  .tuple(fc.constantFrom('qps' as const, 'concurrency' as const), fc.integer({ min: 0, max: 6 }), rollout)
  .map(([metric, threshold, r]) => ({ resource: 'r', metric, threshold, ...r }));

const hotRule: fc.Arbitrary<HotParamRuleOptions & RolloutOptions> = fc
  .tuple(fc.integer({ min: 0, max: 4 }), rollout)
  .map(([threshold, r]) => ({ resource: 'r', paramIndex: 0, threshold, ...r }));

/** One call: how long after the last one it comes, its parameter value, and how long it runs. */
const call = fc.record({
  afterMs: fc.integer({ min: 0, max: 300 }),
  value: fc.integer({ min: 0, max: 3 }),
  runsMs: fc.integer({ min: 0, max: 800 }),
});

const isEnforced = (rule: RolloutOptions): boolean => rule.mode !== 'shadow' && (rule.enforcePercent ?? 100) === 100;

describe('property: rollout', () => {
  it(
    'whatever mix of shadow, percentage and enforced rules, an enforced rule never admits more than its threshold, and a shadow rule never refuses',
    () => {
      fc.assert(
        fc.property(
          fc.array(flowRule, { maxLength: 3 }),
          fc.array(hotRule, { maxLength: 2 }),
          fc.array(call, { minLength: 1, maxLength: 60 }),
          fc.integer(),
          (flow, hotParams, calls, seed) => {
            const clock = new ManualClock(10_000);
            let s = seed >>> 0;
            const random = (): number => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
            const fg = new Floodgate({ clock, random });
            fg.loadRules({ flow, hotParams });
            const inForce = fg.getRules();
            const qpsLimit = Math.min(
              Infinity,
              ...flow.filter((r) => r.metric === 'qps' && isEnforced(r)).map((r) => r.threshold),
            );
            const concurrencyLimit = Math.min(
              Infinity,
              ...flow.filter((r) => r.metric === 'concurrency' && isEnforced(r)).map((r) => r.threshold),
            );
            const running: { entry: Entry; endsAt: number }[] = [];
            /** Admitted calls per 500 ms bucket of the QPS window (two buckets to a second). */
            const perBucket = new Map<number, number>();
            for (const c of calls) {
              clock.advance(c.afterMs);
              const now = clock.now();
              for (let i = running.length - 1; i >= 0; i--) {
                if (running[i]!.endsAt <= now) {
                  running[i]!.entry.exit();
                  running.splice(i, 1);
                }
              }
              const result = fg.tryEntry('r', { args: [`v${c.value}`] });
              if (result instanceof Entry) {
                running.push({ entry: result, endsAt: now + c.runsMs });
                const bucket = Math.floor(now / 500);
                perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1);
                expect((perBucket.get(bucket) ?? 0) + (perBucket.get(bucket - 1) ?? 0)).toBeLessThanOrEqual(qpsLimit);
                expect(running.length).toBeLessThanOrEqual(concurrencyLimit);
              } else {
                // Refused: by a rule in force that is not in shadow.
                const rule = result.rule as RolloutOptions;
                expect(rule.mode).toBeUndefined();
                expect([...inForce.flow, ...inForce.hotParams]).toContain(result.rule);
              }
            }
            for (const { entry } of running) entry.exit();
          },
        ),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
