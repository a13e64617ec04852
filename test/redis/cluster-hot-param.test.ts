import { Floodgate } from '@floodgate/core';
import type { HotParamRuleOptions } from '@floodgate/core/rules';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import { ClusterFixture, countPasses, hit } from './support/cluster-fixture';
import { until } from '../support/until';
import { testRedisUrl } from '../support/test-services';

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `fg-test:cluster-hot-param:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

const rule = (extra: Partial<HotParamRuleOptions> = {}): HotParamRuleOptions => ({
  resource: 'profile',
  paramIndex: 0,
  threshold: 3,
  cluster: { thresholdType: 'global' },
  ...extra,
});

async function engines(rules: HotParamRuleOptions[]): Promise<[Floodgate, Floodgate]> {
  const pair: [Floodgate, Floodgate] = [await fixture.engine(), await fixture.engine()];
  for (const fg of pair) fg.loadHotParamRules(rules);
  return pair;
}

/** `count` calls with `value`, alternating between the engines, all in flight together. */
function burst(pair: readonly Floodgate[], value: unknown, count: number): Promise<number> {
  return countPasses(
    Array.from({ length: count }, (_, i) => hit(pair[i % pair.length]!, 'profile', { args: [value] })),
  );
}

describe('cluster hotspot rules: token bucket per value', () => {
  it('lets two engines pass exactly the threshold per value between them', async () => {
    const pair = await engines([rule()]);
    expect(await burst(pair, 'alice', 8)).toBe(3);
    expect(await burst(pair, 'bob', 8)).toBe(3);
  });

  it('refills a value only once more than a full duration has passed, as Sentinel', async () => {
    const pair = await engines([rule()]);
    await burst(pair, 'alice', 3);
    await fixture.clock.advance(1000);
    expect(await burst(pair, 'alice', 1)).toBe(0);
    await fixture.clock.advance(1);
    expect(await burst(pair, 'alice', 8)).toBe(3);
  });

  it('gives a refused call the local rule’s retryAfterMs and names the value', async () => {
    const [a, b] = await engines([rule({ threshold: 2 })]);
    await hit(a, 'profile', { args: ['alice'] });
    await hit(b, 'profile', { args: ['alice'] });
    await fixture.clock.advance(300);
    await expect(hit(a, 'profile', { args: ['alice'] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'alice',
      retryAfterMs: 701,
    });
  });

  it('gives specific items their own threshold, shared too', async () => {
    const pair = await engines([rule({ threshold: 1, specificItems: { vip: 4 } })]);
    expect(await burst(pair, 'vip', 8)).toBe(4);
    expect(await burst(pair, 'guest', 8)).toBe(1);
  });

  it('adds burstCount tokens to each value’s bucket', async () => {
    const pair = await engines([rule({ threshold: 2, burstCount: 3 })]);
    expect(await burst(pair, 'alice', 8)).toBe(5);
  });

  it('counts 42 and "42" as one value, as the local rule', async () => {
    const [a, b] = await engines([rule({ threshold: 1 })]);
    await hit(a, 'profile', { args: [42] });
    await expect(hit(b, 'profile', { args: ['42'] })).rejects.toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
  });

  it('passes calls without the parameter', async () => {
    const pair = await engines([rule({ threshold: 1 })]);
    expect(await countPasses(Array.from({ length: 4 }, (_, i) => hit(pair[i % 2]!, 'profile')))).toBe(4);
  });

  it('checks each element of an array argument, all or nothing', async () => {
    const [a, b] = await engines([rule({ threshold: 1 })]);
    await hit(a, 'profile', { args: [['x', 'y']] });
    await expect(hit(b, 'profile', { args: [['z', 'y']] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'y',
    });
    // The refused call took nothing from 'z'.
    await hit(a, 'profile', { args: [['z']] });
  });

  it('keeps each rule’s values apart', async () => {
    const pair = await engines([rule({ threshold: 1 }), rule({ paramIndex: 1, threshold: 1 })]);
    await hit(pair[0], 'profile', { args: ['same', 'other'] });
    await expect(hit(pair[1], 'profile', { args: ['same', 'new'] })).rejects.toMatchObject({ value: 'same' });
    await expect(hit(pair[1], 'profile', { args: ['new', 'other'] })).rejects.toMatchObject({ value: 'other' });
  });

  it('scales each value’s threshold with the live instances for perInstance rules', async () => {
    const pair = await engines([rule({ threshold: 2, cluster: { thresholdType: 'perInstance' } })]);
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    expect(await burst(pair, 'alice', 8)).toBe(4);
  });

  it('decides a sync entry() by the local rule', async () => {
    const [a, b] = await engines([rule({ threshold: 1 })]);
    a.entry('profile', { args: ['alice'] }).exit();
    expect(a.tryEntry('profile', { args: ['alice'] })).toMatchObject({ code: 'ERR_HOT_PARAM_BLOCKED' });
    b.entry('profile', { args: ['alice'] }).exit();
  });
});

describe('cluster hotspot rules: throttle per value', () => {
  const throttle = rule({ threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 150 });

  it('paces each value on one schedule across engines', async () => {
    const [a, b] = await engines([throttle]);
    await hit(a, 'profile', { args: ['x'] });
    let queuedPassed = false;
    const queued = hit(b, 'profile', { args: ['x'] }).then(() => {
      queuedPassed = true;
    });
    await until(() => fixture.clock.pendingSleeps === 1, 'the second call to queue');
    // Another value is paced on its own: it passes at once.
    await hit(a, 'profile', { args: ['y'] });
    expect(fixture.clock.pendingSleeps).toBe(1);
    await expect(hit(b, 'profile', { args: ['x'] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'x',
      retryAfterMs: 50,
    });
    await fixture.clock.advance(99);
    expect(queuedPassed).toBe(false);
    await fixture.clock.advance(1);
    await queued;
    expect(queuedPassed).toBe(true);
  });
});

describe('cluster hotspot rules without Redis', () => {
  it('fall back to the local rule, naming the hotspot rule in the event', async () => {
    const [a] = await engines([rule({ threshold: 1 })]);
    const events: ClusterFallbackEvent[] = [];
    a.on('clusterFallback', (event) => events.push(event));
    const client = fixture.clients[0]!;
    client.disconnect();
    await until(() => client.status !== 'ready', 'the client to close');
    await hit(a, 'profile', { args: ['alice'] });
    await expect(hit(a, 'profile', { args: ['alice'] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'alice',
    });
    expect(events.map((e) => [e.reason, e.decidedBy, e.rule])).toEqual([
      ['notReady', 'local', a.getRules().hotParams[0]],
      ['notReady', 'local', a.getRules().hotParams[0]],
    ]);
  });

  it('are rejected at load for concurrency rules', () => {
    const fg = new Floodgate();
    expect(() => fg.loadHotParamRules([rule({ metric: 'concurrency' })])).toThrow(
      "cluster mode applies to qps rules only, got metric 'concurrency'",
    );
  });
});
