import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import { redisCluster } from '@floodgate/redis';
import { ClusterFixture, countPasses, HEALTHY_TIMEOUT_MS, hit } from './support/cluster-fixture';
import { countingCommander } from './support/counting-commander';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { testRedisUrl } from '../support/test-services';

// The checks of one rule made in one tick go to Redis as one script call that admits n of m in
// request order: the limit stays exact, and each refused call learns its retry-after.

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:coalescing:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

async function countedEngine(): Promise<{ fg: Floodgate; sent: () => number }> {
  const commander = countingCommander(fixture.client());
  const backend = redisCluster({
    client: commander,
    prefix: fixture.prefix,
    now: () => fixture.clock.now(),
    timeoutMs: HEALTHY_TIMEOUT_MS,
  });
  fixture.backends.push(backend);
  await backend.ready();
  return {
    fg: new Floodgate({ clock: fixture.clock, cluster: backend }),
    sent: () => (commander.sent.get('EVALSHA') ?? 0) + (commander.sent.get('EVAL') ?? 0),
  };
}

describe('coalesced cluster checks', () => {
  it('sends the concurrent checks of one rule made in one tick as one script call', async () => {
    const { fg, sent } = await countedEngine();
    fg.loadFlowRules([{ resource: 'api', threshold: 1000, cluster: { thresholdType: 'global' } }]);
    const before = sent();
    expect(await countPasses(Array.from({ length: 16 }, () => hit(fg, 'api')))).toBe(16);
    expect(sent() - before).toBe(1);
  });

  it('sends a batch as soon as it holds 16 checks, so Redis works while more are made', async () => {
    const { fg, sent } = await countedEngine();
    fg.loadFlowRules([{ resource: 'api', threshold: 1000, cluster: { thresholdType: 'global' } }]);
    const before = sent();
    expect(await countPasses(Array.from({ length: 40 }, () => hit(fg, 'api')))).toBe(40);
    expect(sent() - before).toBe(3);
  });

  it('sends the concurrent checks of a hotspot rule as one script call whatever their values', async () => {
    const { fg, sent } = await countedEngine();
    fg.loadHotParamRules([{ resource: 'user', paramIndex: 0, threshold: 1, cluster: { thresholdType: 'global' } }]);
    const before = sent();
    const calls = Array.from({ length: 16 }, (_, i) => hit(fg, 'user', { args: [`user-${i % 8}`] }));
    expect(await countPasses(calls)).toBe(8);
    expect(sent() - before).toBe(1);
  });

  it('admits the first calls in request order and tells each refused call its retry-after', async () => {
    const { fg } = await countedEngine();
    fg.loadFlowRules([{ resource: 'api', threshold: 3, cluster: { thresholdType: 'global' } }]);
    await fixture.clock.advance(200);
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => hit(fg, 'api')));
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
    ]);
    for (const o of outcomes.slice(3))
      expect(o).toMatchObject({ reason: { code: 'ERR_FLOW_BLOCKED', retryAfterMs: 800 } });
  });

  it(
    'passes exactly min(N, T) of N concurrent calls across two engines, whatever N and T',
    async () => {
      const engines = [(await countedEngine()).fg, (await countedEngine()).fg];
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 300 }),
          fc.integer({ min: 0, max: 200 }),
          fc.boolean(),
          async (calls, threshold, hotspot) => {
            const resource = `r${n++}`;
            for (const fg of engines) {
              if (hotspot)
                fg.loadHotParamRules([{ resource, paramIndex: 0, threshold, cluster: { thresholdType: 'global' } }]);
              else fg.loadFlowRules([{ resource, threshold, cluster: { thresholdType: 'global' } }]);
            }
            const passed = await countPasses(
              Array.from({ length: calls }, (_, i) => hit(engines[i % 2]!, resource, { args: ['one-value'] })),
            );
            expect(passed).toBe(Math.min(calls, threshold));
          },
        ),
        propertyRuns(60),
      );
    },
    propertyTimeoutMs(60),
  );

  it('charges a refused call nothing, so later smaller calls in the same batch still pass', async () => {
    const { fg } = await countedEngine();
    fg.loadFlowRules([{ resource: 'api', threshold: 5, cluster: { thresholdType: 'global' } }]);
    const outcomes = await Promise.allSettled([4, 3, 1, 1].map((acquireCount) => hit(fg, 'api', { acquireCount })));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
  });
});
