import { Floodgate } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import { redisCluster } from '@floodgate/redis';
import Redis from 'ioredis';
import { ClusterFixture, countPasses, HEALTHY_TIMEOUT_MS, hit } from './support/cluster-fixture';
import { until } from '../support/until';
import { countingCommander } from './support/counting-commander';
import { testRedisUrl } from '../support/test-services';

const FILE_PREFIX = 'fg-test:redis-cluster';

const redisUrl = testRedisUrl();
let fixture: ClusterFixture;
let n = 0;

beforeEach(() => {
  fixture = new ClusterFixture(redisUrl, `${FILE_PREFIX}:${process.pid}:${n++}`);
});
afterEach(async () => {
  await fixture.close();
});

const rule = (extra: Partial<FlowRuleOptions> = {}): FlowRuleOptions => ({
  resource: 'api',
  threshold: 5,
  cluster: { thresholdType: 'global' },
  ...extra,
});

/** `count` calls, alternating between the engines, all in flight together. */
function burst(engines: readonly Floodgate[], count: number, resource = 'api'): Promise<number> {
  return countPasses(Array.from({ length: count }, (_, i) => hit(engines[i % engines.length]!, resource)));
}

describe('redisCluster: global reject rules', () => {
  it('lets two engines pass exactly the threshold between them in a window', async () => {
    const engines = [await fixture.engine(), await fixture.engine()];
    for (const fg of engines) fg.loadFlowRules([rule()]);
    expect(await burst(engines, 12)).toBe(5);
  });

  it('lets the threshold pass again in the next window, and no more', async () => {
    const engines = [await fixture.engine(), await fixture.engine()];
    for (const fg of engines) fg.loadFlowRules([rule()]);
    await burst(engines, 12);
    await fixture.clock.advance(1000);
    expect(await burst(engines, 12)).toBe(5);
    await fixture.clock.advance(1000);
    expect(await burst(engines, 12)).toBe(5);
  });

  it('counts calls from both engines together, one after another', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 3 })]);
    await hit(a, 'api');
    await hit(b, 'api');
    await hit(a, 'api');
    await expect(hit(b, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', resource: 'api' });
    await expect(hit(a, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('slides its window as local rules do: a bucket leaves it 1000 ms after it started', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 4 })]);
    expect(await burst([a, b], 2)).toBe(2);
    await fixture.clock.advance(500);
    expect(await burst([a, b], 4)).toBe(2);
    await fixture.clock.advance(500);
    expect(await burst([a, b], 4)).toBe(2);
  });

  it('gives a refused call the time until the oldest bucket leaves the window as retryAfterMs', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 1 })]);
    await hit(a, 'api');
    await fixture.clock.advance(300);
    await expect(hit(b, 'api')).rejects.toMatchObject({ retryAfterMs: 700 });
  });

  it('takes acquireCount tokens from the shared window', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 5 })]);
    await hit(a, 'api', { acquireCount: 3 });
    await expect(hit(b, 'api', { acquireCount: 3 })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await hit(b, 'api', { acquireCount: 2 });
  });

  it('does not ask Redis again once it knows the window is full until a bucket leaves it', async () => {
    const client = fixture.client();
    const commander = countingCommander(client);
    const backend = redisCluster({
      client: commander,
      prefix: fixture.prefix,
      now: () => fixture.clock.now(),
      timeoutMs: HEALTHY_TIMEOUT_MS,
    });
    fixture.backends.push(backend);
    await backend.ready();
    const fg = new Floodgate({ clock: fixture.clock, cluster: backend });
    fg.loadFlowRules([rule({ threshold: 2 })]);
    await burst([fg], 2);
    const before = commander.total();
    expect(await burst([fg], 10)).toBe(0);
    expect(commander.total()).toBe(before);
    await fixture.clock.advance(1000);
    expect(await burst([fg], 1)).toBe(1);
    expect(commander.total()).toBe(before + 1);
  });

  it('limits only the origin a rule names, counting it across engines', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 1, limitOrigin: 'batch' })]);
    await hit(a, 'api', { origin: 'batch' });
    await expect(hit(b, 'api', { origin: 'batch' })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await hit(b, 'api', { origin: 'web' });
    await hit(b, 'api');
  });

  it("counts each origin of an 'other' rule on its own, across engines", async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 1, limitOrigin: 'other' })]);
    await hit(a, 'api', { origin: 'tenant-1' });
    await hit(b, 'api', { origin: 'tenant-2' });
    await expect(hit(b, 'api', { origin: 'tenant-1' })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await expect(hit(a, 'api', { origin: 'tenant-2' })).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('keeps two rules of one resource on separate counts', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    const rules = [rule({ threshold: 3 }), rule({ threshold: 10 })];
    for (const fg of [a, b]) fg.loadFlowRules(rules);
    expect(await burst([a, b], 6)).toBe(3);
  });

  it('shares one count between instances that run different thresholds for the same rule', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    a.loadFlowRules([rule({ threshold: 2 })]);
    b.loadFlowRules([rule({ threshold: 4 })]);
    await hit(a, 'api');
    await hit(a, 'api');
    await expect(hit(a, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    await hit(b, 'api');
    await hit(b, 'api');
    await expect(hit(b, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('keeps counting in Redis across a reload of the same rules', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 3 })]);
    await burst([a, b], 2);
    a.loadFlowRules([rule({ threshold: 3 })]);
    expect(await burst([a, b], 4)).toBe(1);
  });

  it('runs the rule locally when the engine has no cluster backend', async () => {
    const local = new Floodgate({ clock: fixture.clock });
    local.loadFlowRules([rule({ threshold: 1 })]);
    await hit(local, 'api');
    await expect(hit(local, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });
});

describe('redisCluster: sync entry()', () => {
  it('decides a cluster rule without leasing by the local rule', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 2 })]);
    a.entry('api').exit();
    a.entry('api').exit();
    expect(a.tryEntry('api')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    b.entry('api').exit();
    b.entry('api').exit();
  });

  it('does not take from the shared window', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 2 })]);
    a.entry('api').exit();
    expect(await burst([a, b], 4)).toBe(2);
  });
});

describe('redisCluster: perInstance rules', () => {
  const perInstance = rule({ threshold: 3, cluster: { thresholdType: 'perInstance' } });

  it('multiplies the threshold by the live instances', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([perInstance]);
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    expect(fixture.backends.map((backend) => backend.liveInstances)).toEqual([2, 2]);
    expect(await burst([a, b], 10)).toBe(6);
  });

  it('shrinks the threshold when an instance closes', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([perInstance]);
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    await fixture.backends[1]!.close();
    expect(await fixture.backends[0]!.heartbeat()).toBe(1);
    expect(await burst([a], 10)).toBe(3);
  });

  it('forgets an instance whose heartbeats stopped for longer than the TTL', async () => {
    const [a] = [await fixture.engine({ instanceTtlMs: 3000 }), await fixture.engine({ instanceTtlMs: 3000 })];
    a.loadFlowRules([perInstance]);
    await Promise.all(fixture.backends.map((backend) => backend.heartbeat()));
    expect(await fixture.backends[0]!.heartbeat()).toBe(2);
    await fixture.clock.advance(3001);
    expect(await fixture.backends[0]!.heartbeat()).toBe(1);
  });
});

describe('redisCluster: throttle rules', () => {
  const throttle = rule({ threshold: 10, behavior: 'throttle', maxQueueingTimeMs: 250 });

  it('paces calls from both engines on one shared schedule', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([throttle]);
    const passed: string[] = [];
    const call = (fg: Floodgate, name: string): Promise<void> => hit(fg, 'api').then(() => void passed.push(name));
    await call(a, 'a1');
    const b1 = call(b, 'b1');
    await until(() => fixture.clock.pendingSleeps === 1, 'b1 to queue');
    const a2 = call(a, 'a2');
    await until(() => fixture.clock.pendingSleeps === 2, 'a2 to queue');
    await expect(call(b, 'b2')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED', retryAfterMs: 50 });
    await fixture.clock.advance(100);
    await b1;
    expect(passed).toEqual(['a1', 'b1']);
    await fixture.clock.advance(100);
    await a2;
    expect(passed).toEqual(['a1', 'b1', 'a2']);
  });

  it('passes a call at once when the last pass is a full interval ago', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([throttle]);
    await hit(a, 'api');
    await fixture.clock.advance(100);
    await hit(b, 'api');
    expect(fixture.clock.pendingSleeps).toBe(0);
  });

  it('blocks a sync entry() that would have to wait, by the local pacing', async () => {
    const [a] = [await fixture.engine()];
    a.loadFlowRules([throttle]);
    a.entry('api').exit();
    expect(a.tryEntry('api')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });
});

describe('redisCluster: leased tokens', () => {
  const leasing = rule({ threshold: 10, cluster: { thresholdType: 'global', leaseTokens: 4 } });

  async function countedEngine(): Promise<{ fg: Floodgate; commander: ReturnType<typeof countingCommander> }> {
    const commander = countingCommander(fixture.client());
    const backend = redisCluster({
      client: commander,
      prefix: fixture.prefix,
      now: () => fixture.clock.now(),
      timeoutMs: HEALTHY_TIMEOUT_MS,
    });
    fixture.backends.push(backend);
    await backend.ready();
    return { fg: new Floodgate({ clock: fixture.clock, cluster: backend }), commander };
  }

  it('takes a batch per round trip and spends it without asking Redis', async () => {
    const { fg, commander } = await countedEngine();
    fg.loadFlowRules([leasing]);
    const before = commander.total();
    for (let i = 0; i < 4; i++) await hit(fg, 'api');
    expect(commander.total() - before).toBe(1);
  });

  it('never lets two engines pass more than the threshold in a window', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([leasing]);
    let passes = 0;
    for (let i = 0; i < 30; i++) passes += await countPasses([hit(i % 2 === 0 ? a : b, 'api')]);
    expect(passes).toBe(10);
  });

  it('loses the leased tokens left when their bucket ends', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([leasing]);
    await hit(a, 'api');
    await fixture.clock.advance(500);
    // a's 3 unused tokens are still counted in the window, and expired for a.
    expect(await burst([b], 10)).toBe(6);
  });

  it('lets a sync entry() spend tokens leased by an earlier call', async () => {
    const [a] = [await fixture.engine()];
    a.loadFlowRules([rule({ threshold: 1000, cluster: { thresholdType: 'global', leaseTokens: 3 } })]);
    await hit(a, 'api');
    a.entry('api').exit();
    a.entry('api').exit();
    expect(a.getRules().flow[0]!.cluster!.leaseTokens).toBe(3);
  });

  it('blocks a sync entry() once Redis said the window is full', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    const small = rule({ threshold: 2, cluster: { thresholdType: 'global', leaseTokens: 2 } });
    for (const fg of [a, b]) fg.loadFlowRules([small]);
    await hit(b, 'api');
    await hit(b, 'api');
    await expect(hit(a, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(a.tryEntry('api')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('makes a sync entry() without a lease decide locally and lease in the background', async () => {
    const { fg, commander } = await countedEngine();
    fg.loadFlowRules([leasing]);
    const before = commander.total();
    fg.entry('api').exit();
    await until(() => commander.total() > before, 'the background lease');
    await new Promise((resolve) => setTimeout(resolve, 5));
    fg.entry('api').exit();
    fg.entry('api').exit();
    expect(commander.total() - before).toBe(1);
  });
});

describe('redisCluster: scripts', () => {
  it('loads its script again after SCRIPT FLUSH, keeping the count', async () => {
    const [a, b] = [await fixture.engine(), await fixture.engine()];
    for (const fg of [a, b]) fg.loadFlowRules([rule({ threshold: 2 })]);
    await hit(a, 'api');
    await fixture.clients[0]!.script('FLUSH');
    await hit(b, 'api');
    await expect(hit(a, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(await fixture.clients[0]!.script('EXISTS', '0'.repeat(40))).toEqual([0]);
  });

  it('keys every rule under the prefix and lets them expire on their own', async () => {
    const [a] = [await fixture.engine()];
    a.loadFlowRules([rule({ threshold: 2 }), rule({ resource: 'slow', threshold: 5, behavior: 'throttle' })]);
    await hit(a, 'api');
    await hit(a, 'slow');
    const admin = fixture.client();
    const keys = await admin.keys(`${fixture.prefix}:*`);
    expect(keys.sort()).toEqual([
      `${fixture.prefix}:p:{flow|slow|throttle|default#0}`,
      `${fixture.prefix}:w:{flow|api|reject|default#0}`,
    ]);
    for (const key of keys) expect(await admin.pttl(key)).toBeGreaterThan(0);
  });
});

describe('redisCluster: close()', () => {
  it('makes later checks fall back at once and leaves the client open', async () => {
    const fg = await fixture.engine();
    fg.loadFlowRules([rule({ threshold: 1 })]);
    const reasons: string[] = [];
    fg.on('clusterFallback', (event) => reasons.push(event.reason));
    await fixture.backends[0]!.close();
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(reasons).toEqual(['notReady', 'notReady']);
    expect(await fixture.clients[0]!.ping()).toBe('PONG');
  });
});

describe('redisCluster: options', () => {
  it('rejects a bad option, naming it and the value', () => {
    const client = new Redis({ lazyConnect: true });
    expect(() => redisCluster({ client, timeoutMs: -1 })).toThrow('timeoutMs must be a finite number > 0, got -1');
    expect(() => redisCluster({ client, failureThreshold: 1.5 })).toThrow(
      'failureThreshold must be an integer > 0, got 1.5',
    );
    expect(() => redisCluster({ client, prefix: '' })).toThrow('prefix must be a non-empty string');
    expect(() => redisCluster({ client, timeout: 5 } as never)).toThrow('unknown option "timeout"');
    client.disconnect();
  });

  it('rejects something that is not a Redis client', () => {
    expect(() => redisCluster({ client: {} })).toThrow(TypeError);
  });
});
