import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import type { FlowRuleOptions, HotParamRuleOptions } from '@floodgate/core/rules';
import { redisCluster } from '@floodgate/redis';
import { ClusterFixture, countPasses, HEALTHY_TIMEOUT_MS, hit } from './support/cluster-fixture';
import { countingCommander } from './support/counting-commander';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { testRedisUrl } from '../support/test-services';
import { until } from '../support/until';

// A call the store admitted and a later check refused (or that was cancelled) gives its shared
// tokens back: to the window bucket, or the token bucket refill, it was taken in, so a refused
// call spends none of the global quota.

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:refunds:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

const windowKey = (): string => `${fixture.prefix}:w:{flow|api|reject|default#0}`;
const bucketKey = (value: string): string => `${fixture.prefix}:t:{hotParam|api|reject|index:0#0}:${value}`;

/** What the shared window of the rule on 'api' holds (both buckets). */
async function sharedCount(): Promise<number> {
  const counts = await fixture.client().hmget(windowKey(), 'c0', 'c1');
  return counts.reduce((sum, c) => sum + Number(c ?? 0), 0);
}

/** The tokens left in a value's shared bucket. */
async function tokensLeft(value: string): Promise<number | undefined> {
  const raw = await fixture.client().getBuffer(bucketKey(value));
  return raw === null ? undefined : raw.readDoubleLE(8);
}

const sharedFlow = (
  threshold: number,
  cluster: FlowRuleOptions['cluster'] = { thresholdType: 'global' },
): FlowRuleOptions => ({ resource: 'api', threshold, cluster });
const localHotspot: HotParamRuleOptions = { resource: 'api', paramIndex: 0, threshold: 1 };

describe('refunds of a shared window (cluster flow rule)', () => {
  it('gives back the tokens of calls a local hotspot rule refused, so another instance can spend them', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadRules({ flow: [sharedFlow(5)], hotParams: [localHotspot] });
    await hit(a, 'api', { args: ['alice'] });
    for (let i = 0; i < 10; i++)
      await expect(hit(a, 'api', { args: ['alice'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    await until(async () => (await sharedCount()) === 1, "the refused calls' refunds to reach Redis");
    expect(
      await countPasses(['bob', 'carol', 'dave', 'erin', 'frank'].map((user) => hit(b, 'api', { args: [user] }))),
    ).toBe(4);
  });

  it('coalesces the refunds of one tick into one script call', async () => {
    const commander = countingCommander(fixture.client());
    const backend = redisCluster({
      client: commander,
      prefix: fixture.prefix,
      now: () => fixture.clock.now(),
      timeoutMs: HEALTHY_TIMEOUT_MS,
    });
    fixture.backends.push(backend);
    await backend.ready();
    const fg = new Floodgate({ clock: fixture.clock, cluster: backend });
    fg.loadRules({ flow: [sharedFlow(100)], hotParams: [localHotspot] });
    const before = commander.total();
    expect(await countPasses(Array.from({ length: 12 }, () => hit(fg, 'api', { args: ['alice'] })))).toBe(1);
    await until(async () => (await sharedCount()) === 1, 'the refunds to reach Redis');
    // One check batch, one refund batch.
    expect(commander.total() - before).toBe(2);
  });

  it('gives back a cancelled call’s token to its bucket while that bucket is in the window', async () => {
    const fg = await fixture.engine();
    fg.loadFlowRules([sharedFlow(2)]);
    const first = await fg.enter('api');
    await fixture.clock.advance(500);
    await hit(fg, 'api');
    first.cancel();
    await until(async () => (await sharedCount()) === 1, 'the refund to reach Redis');
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('gives nothing back once the bucket the token was taken in has left the window', async () => {
    const fg = await fixture.engine();
    fg.loadFlowRules([sharedFlow(2)]);
    const first = await fg.enter('api');
    await fixture.clock.advance(1000);
    // The same ring slot now holds a later bucket: the refund must not take from it.
    await hit(fg, 'api');
    first.cancel();
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(await sharedCount()).toBe(2);
  });

  it('gives leased tokens back to the lease, without a round trip', async () => {
    const commander = countingCommander(fixture.client());
    const backend = redisCluster({
      client: commander,
      prefix: fixture.prefix,
      now: () => fixture.clock.now(),
      timeoutMs: HEALTHY_TIMEOUT_MS,
    });
    fixture.backends.push(backend);
    await backend.ready();
    const fg = new Floodgate({ clock: fixture.clock, cluster: backend });
    fg.loadRules({ flow: [sharedFlow(100, { thresholdType: 'global', leaseTokens: 4 })], hotParams: [localHotspot] });
    const before = commander.total();
    await hit(fg, 'api', { args: ['alice'] });
    for (let i = 0; i < 5; i++)
      await expect(hit(fg, 'api', { args: ['alice'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    for (const user of ['bob', 'carol', 'dave']) await hit(fg, 'api', { args: [user] });
    expect(commander.total() - before).toBe(1);
  });

  it(
    'spends exactly what the calls that ran took, whatever a local hotspot rule refuses (property)',
    async () => {
      // Two engines on one backend (one connection, so each refund reaches Redis before the next check).
      const backend = await fixture.backend();
      const engines = [
        new Floodgate({ clock: fixture.clock, cluster: backend }),
        new Floodgate({ clock: fixture.clock, cluster: backend }),
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 12 }),
          fc.array(fc.record({ engine: fc.integer({ min: 0, max: 1 }), user: fc.integer({ min: 0, max: 4 }) }), {
            maxLength: 40,
          }),
          async (threshold, calls) => {
            const resource = `r${n++}`;
            for (const fg of engines)
              fg.loadRules({
                flow: [{ ...sharedFlow(threshold), resource }],
                hotParams: [{ ...localHotspot, resource }],
              });
            const seen = new Set<string>();
            let expected = 0;
            let passed = 0;
            for (const { engine, user } of calls) {
              // The local hotspot rule admits one call per user per engine in the window; the
              // shared rule admits the first `threshold` of those.
              const pair = `${engine}:${user}`;
              if (!seen.has(pair) && expected < threshold) expected++;
              seen.add(pair);
              passed += await countPasses([hit(engines[engine]!, resource, { args: [`user-${user}`] })]);
            }
            expect(passed).toBe(expected);
          },
        ),
        propertyRuns(40),
      );
    },
    propertyTimeoutMs(40),
  );
});

describe('refunds of a shared token bucket (cluster hotspot rule)', () => {
  const sharedHotspot = (threshold: number): HotParamRuleOptions => ({
    resource: 'api',
    paramIndex: 0,
    threshold,
    cluster: { thresholdType: 'global' },
  });

  it('gives back the tokens of calls a local flow rule refused, so another instance can spend them', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    a.loadRules({ hotParams: [sharedHotspot(2)], flow: [{ resource: 'api', threshold: 1 }] });
    b.loadRules({ hotParams: [sharedHotspot(2)] });
    await hit(a, 'api', { args: ['sku-1'] });
    await expect(hit(a, 'api', { args: ['sku-1'] })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await until(async () => (await tokensLeft('sku-1')) === 1, "the refused call's refund to reach Redis");
    await hit(b, 'api', { args: ['sku-1'] });
    await expect(hit(b, 'api', { args: ['sku-1'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it('gives back every value of an array argument', async () => {
    const fg = await fixture.engine();
    fg.loadRules({ hotParams: [sharedHotspot(1)], flow: [{ resource: 'api', threshold: 1 }] });
    await hit(fg, 'api', { args: [['other']] });
    await expect(hit(fg, 'api', { args: [['sku-1', 'sku-2']] })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await until(
      async () => (await tokensLeft('sku-1')) === 1 && (await tokensLeft('sku-2')) === 1,
      'both refunds to reach Redis',
    );
  });

  it('gives nothing back to a bucket refilled since the take', async () => {
    // Two engines on one backend: the refund reaches Redis before b's next check.
    const backend = await fixture.backend();
    const [a, b] = [
      new Floodgate({ clock: fixture.clock, cluster: backend }),
      new Floodgate({ clock: fixture.clock, cluster: backend }),
    ];
    for (const fg of [a, b]) fg.loadRules({ hotParams: [sharedHotspot(2)] });
    const first = await a.enter('api', { args: ['sku-1'] });
    await fixture.clock.advance(1500);
    // b's call refills the bucket (to 2) and takes one: 1 left.
    await hit(b, 'api', { args: ['sku-1'] });
    first.cancel();
    await hit(b, 'api', { args: ['sku-1'] });
    await expect(hit(b, 'api', { args: ['sku-1'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    expect(await tokensLeft('sku-1')).toBe(0);
  });
});
