import fc from 'fast-check';
import { Entry, Floodgate, isBlockError, type BlockError } from '@floodgate/core';
import type { FlowRuleOptions, HotParamRuleOptions } from '@floodgate/core/rules';
import { blockResponse, MAX_HEADER_VALUE } from '@floodgate/core/http';
import { ClusterFixture, hit } from './support/cluster-fixture';
import { MAX_DURATION_MS } from '../../packages/core/src/kernel/rule-reader';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { testRedisUrl } from '../support/test-services';
import { badHeaderNumbers } from '../support/header-numbers';

// Cluster mode with extreme but valid numbers (#24): the scripts and the specs the engine
// gives them keep every number finite and exact, and no shared limit admits more than its
// threshold.

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:extreme-numbers:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

/** The slowest pace a throttle rule may set: one call per MAX_DURATION_MS. */
const MIN_PACED = 1000 / MAX_DURATION_MS;

async function pair(rules: { flow?: FlowRuleOptions[]; hotParams?: HotParamRuleOptions[] }): Promise<Floodgate[]> {
  const engines = [await fixture.engine(), await fixture.engine()];
  for (const fg of engines) fg.loadRules(rules);
  return engines;
}

/** The block a call is refused with (it fails the test if the call passes). */
async function refusal(call: Promise<unknown>): Promise<BlockError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isBlockError(error)) throw new Error(`expected a block, got ${String(error)}`);
  return error;
}

describe('cluster mode with extreme numbers: focused cases', () => {
  it('counts a reject window with every digit: a threshold of 2^53 − 1 refuses the call one token past it', async () => {
    // Lua's tostring keeps 14 digits: 1234567890123449 was stored as 1234567890123400, so the
    // store forgot 49 tokens and passed a call that took the window to 2^53.
    const [a, b] = await pair({
      flow: [{ resource: 'api', threshold: Number.MAX_SAFE_INTEGER, cluster: { thresholdType: 'global' } }],
    });
    const first = 1_234_567_890_123_449;
    await hit(a!, 'api', { acquireCount: first });
    const error = await refusal(hit(b!, 'api', { acquireCount: Number.MAX_SAFE_INTEGER - first + 1 }));
    expect(error).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await hit(b!, 'api', { acquireCount: Number.MAX_SAFE_INTEGER - first });
    await expect(hit(a!, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it.each(['window', 'tokenBucket'] as const)(
    'caps a perInstance %s threshold of 2^53 − 1 × two instances at 2^53 − 1, where the store counts exactly',
    async (kind) => {
      const cluster = { thresholdType: 'perInstance' as const };
      const rules =
        kind === 'window'
          ? { flow: [{ resource: 'api', threshold: Number.MAX_SAFE_INTEGER, cluster }] }
          : { hotParams: [{ resource: 'api', paramIndex: 0, threshold: Number.MAX_SAFE_INTEGER, cluster }] };
      const [a, b] = await pair(rules);
      // A backend's heartbeat can reach Redis before the other's first: once both are answered,
      // both instances are in the set, and the next round's replies count them both.
      await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
      await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
      expect(fixture.backends.map((backend) => backend.liveInstances)).toEqual([2, 2]);
      await hit(a!, 'api', { args: ['v'], acquireCount: Number.MAX_SAFE_INTEGER });
      await expect(hit(b!, 'api', { args: ['v'], acquireCount: 1 })).rejects.toMatchObject({
        code: kind === 'window' ? 'ERR_FLOW_BLOCKED' : 'ERR_HOT_PARAM_BLOCKED',
      });
    },
  );

  it('paces at the slowest pace across instances: one of twenty queued calls passes, each refusal with a finite wait', async () => {
    const engines = await pair({
      flow: [
        {
          resource: 'api',
          threshold: MIN_PACED,
          behavior: 'throttle',
          maxQueueingTimeMs: 500,
          cluster: { thresholdType: 'global' },
        },
      ],
    });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => hit(engines[i % 2]!, 'api')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      expect(r.reason).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
      expect((r.reason as BlockError).retryAfterMs).toBeCloseTo(MAX_DURATION_MS - 500, -1);
    }
  });

  it('refuses a call taking 2^53 − 1 tokens at the slowest pace with a finite wait, and a header within bounds', async () => {
    const [a, b] = await pair({
      hotParams: [
        {
          resource: 'api',
          paramIndex: 0,
          threshold: 1,
          behavior: 'throttle',
          durationMs: Number.MAX_SAFE_INTEGER,
          maxQueueingTimeMs: MAX_DURATION_MS,
          cluster: { thresholdType: 'global' },
        },
      ],
    });
    await hit(a!, 'api', { args: ['v'] });
    const error = await refusal(hit(b!, 'api', { args: ['v'], acquireCount: Number.MAX_SAFE_INTEGER }));
    expect(Number.isFinite(error.retryAfterMs)).toBe(true);
    expect(blockResponse(error).headers['Retry-After']).toBe(String(MAX_HEADER_VALUE));
  });
});

/** One cluster rule of the property, with what the invariant needs to know of it. */
type ClusterRule =
  | { readonly kind: 'window'; readonly rule: FlowRuleOptions & { threshold: number } }
  | { readonly kind: 'pace'; readonly rule: FlowRuleOptions & { threshold: number } }
  | { readonly kind: 'bucket'; readonly rule: HotParamRuleOptions & { durationMs: number; burstCount: number } }
  | { readonly kind: 'hotPace'; readonly rule: HotParamRuleOptions & { durationMs: number } };

type Step =
  | { readonly op: 'call'; readonly engine: number; readonly acquireCount: number }
  | { readonly op: 'advance'; readonly ms: number };

const global = { thresholdType: 'global' as const };
const acquireCount = fc.oneof(
  { weight: 5, arbitrary: fc.constant(1) },
  { weight: 3, arbitrary: fc.constantFrom(0, 2, 2 ** 31, 2 ** 52, 1_234_567_890_123_449, 2 ** 53 - 1) },
);
const queue = fc.constantFrom(0, 0, 0.5, 500, MAX_DURATION_MS);
const period = fc.constantFrom(5e-324, 0.001, 0.5, 1000, MAX_DURATION_MS, 2 ** 53 - 1);
const clusterRule: fc.Arbitrary<ClusterRule> = fc.oneof(
  fc
    .constantFrom(0, 5e-324, 0.5, 1, 3, 2 ** 31 - 1, 2 ** 53 - 1)
    .map((threshold): ClusterRule => ({ kind: 'window', rule: { resource: 'api', threshold, cluster: global } })),
  fc
    .record({ threshold: fc.constantFrom(MIN_PACED, 0.5, 1, 3, 1000.25, 2 ** 53 - 1), maxQueueingTimeMs: queue })
    .map(({ threshold, maxQueueingTimeMs }): ClusterRule => ({
      kind: 'pace',
      rule: { resource: 'api', threshold, behavior: 'throttle', maxQueueingTimeMs, cluster: global },
    })),
  fc
    .record({
      threshold: fc.constantFrom(0, 1, 3, 2 ** 31 - 1, 2 ** 53 - 1),
      burst: fc.constantFrom(0, 1, -1),
      durationMs: period,
    })
    .map(({ threshold, burst, durationMs }): ClusterRule => {
      const burstCount =
        burst < 0 ? Number.MAX_SAFE_INTEGER - threshold : Math.min(burst, Number.MAX_SAFE_INTEGER - threshold);
      return {
        kind: 'bucket',
        rule: { resource: 'api', paramIndex: 0, threshold, burstCount, durationMs, cluster: global },
      };
    }),
  fc
    .record({ threshold: fc.constantFrom(1, 3, 2 ** 53 - 1), durationMs: period, maxQueueingTimeMs: queue })
    .map(({ threshold, durationMs, maxQueueingTimeMs }): ClusterRule => ({
      kind: 'hotPace',
      rule: {
        resource: 'api',
        paramIndex: 0,
        threshold,
        behavior: 'throttle',
        durationMs,
        maxQueueingTimeMs,
        cluster: global,
      },
    })),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('call' as const), engine: fc.constantFrom(0, 1), acquireCount }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      ms: fc.constantFrom(0, 5e-324, 0.001, 1, 499.999, 500, 1000, MAX_DURATION_MS),
    }),
  },
);

/** A call the store admitted: when it took its slot (after any wait), and how many tokens. */
interface Admitted {
  readonly at: number;
  readonly acquireCount: number;
}

/** Where the admitted calls break the rule's limit, checked at `now`. */
function limitViolations(c: ClusterRule, admitted: readonly Admitted[], firstAt: number, now: number): string[] {
  const out: string[] = [];
  const slack = (x: number): number => 1e-6 + Math.abs(x) * 2 ** -50;
  switch (c.kind) {
    case 'window': {
      const from = Math.floor(now / 500) * 500 - 500;
      const passed = admitted.filter((a) => a.at >= from && a.at <= now).reduce((sum, a) => sum + a.acquireCount, 0);
      if (passed > c.rule.threshold) out.push(`${passed} tokens passed in the window at ${now}`);
      break;
    }
    case 'bucket': {
      const taken = admitted.reduce((sum, a) => sum + a.acquireCount, 0);
      const { threshold, burstCount, durationMs } = c.rule;
      const bound = threshold + burstCount + (threshold * (now - firstAt)) / durationMs;
      if (taken > bound + slack(bound)) out.push(`${taken} tokens taken by ${now}, more than ${bound}`);
      break;
    }
    case 'pace':
    case 'hotPace': {
      const costOf = (a: Admitted): number =>
        ((c.kind === 'pace' ? 1000 : c.rule.durationMs) * a.acquireCount) / c.rule.threshold;
      const paced = admitted.filter((a) => a.acquireCount > 0).sort((x, y) => x.at - y.at);
      for (let i = 1; i < paced.length; i++) {
        const gap = paced[i]!.at - paced[i - 1]!.at;
        if (gap + slack(paced[i]!.at) < costOf(paced[i]!))
          out.push(`calls at ${paced[i - 1]!.at} and ${paced[i]!.at}, closer than ${costOf(paced[i]!)} ms`);
      }
    }
  }
  return out;
}

/** What is wrong with a block's numbers: its retryAfterMs, and its headers in the default form. */
function numberViolations(error: BlockError): string[] {
  const out: string[] = [];
  const wait = error.retryAfterMs;
  if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0)) out.push(`retryAfterMs ${wait}`);
  out.push(...badHeaderNumbers(blockResponse(error).headers));
  return out;
}

const RUNS = 40;

describe('property: cluster mode with extreme numbers', () => {
  it(
    'no NaN or Infinity reaches a shared decision, an error or a header, and no shared limit admits more than its threshold',
    async () => {
      await fc.assert(
        fc.asyncProperty(clusterRule, fc.array(step, { minLength: 1, maxLength: 25 }), async (c, steps) => {
          const local = new ClusterFixture(redisUrl, `fg-test:extreme-numbers:${process.pid}:${n++}`);
          try {
            const engines = [await local.engine(), await local.engine()];
            const fallbacks: string[] = [];
            for (const fg of engines) {
              fg.loadRules(c.kind === 'window' || c.kind === 'pace' ? { flow: [c.rule] } : { hotParams: [c.rule] });
              fg.on('clusterFallback', (event) => fallbacks.push(event.reason));
            }
            const admitted: Admitted[] = [];
            const found: string[] = [];
            const pending: Promise<void>[] = [];
            const firstAt = local.clock.now();
            for (const s of steps) {
              if (s.op === 'advance') {
                await local.clock.advance(s.ms);
              } else {
                const queued = local.clock.nextSleep();
                const decided = engines[s.engine]!.enter('api', { args: ['v'], acquireCount: s.acquireCount }).then(
                  (entry: Entry) => {
                    admitted.push({ at: entry.createdAt, acquireCount: s.acquireCount });
                    entry.exit();
                  },
                  (error: unknown) => {
                    if (!isBlockError(error)) throw error;
                    found.push(...numberViolations(error));
                  },
                );
                pending.push(decided);
                // Until the call is decided (Redis answered), or waits in its queue on the clock.
                await Promise.race([decided, queued]);
              }
              found.push(...limitViolations(c, admitted, firstAt, local.clock.now()));
            }
            while (local.clock.pendingSleeps > 0) await local.clock.advance(MAX_DURATION_MS);
            await Promise.all(pending);
            found.push(...limitViolations(c, admitted, firstAt, local.clock.now()));
            // A store too slow to answer (a loaded machine) hands the decision to the local rule,
            // which the store's books do not count: such a case says nothing.
            if (fallbacks.length === 0) expect(found).toEqual([]);
          } finally {
            await local.close();
          }
        }),
        propertyRuns(RUNS),
      );
    },
    propertyTimeoutMs(RUNS),
  );
});
