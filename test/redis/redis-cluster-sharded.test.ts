import { performance } from 'node:perf_hooks';
import { Floodgate, isBlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import { redisCluster, type RedisClusterBackend, type RedisClusterOptions } from '@floodgate/redis';
import { countPasses, hit, T0 } from './support/cluster-fixture';
import { useRedisCluster } from './support/redis-cluster-nodes';
import { watchLoopDelay } from '../support/loop-delay';
import { until } from '../support/until';

// Cluster mode on a real Redis Cluster (three masters, three replicas) through ioredis's
// Redis.Cluster: every script's keys share one slot, so multi-key checks never meet CROSSSLOT.

const redis = useRedisCluster();
const backends: RedisClusterBackend[] = [];
let clock: ManualClock;
let prefix: string;
let n = 0;

beforeEach(() => {
  clock = new ManualClock(T0);
  prefix = `fg-test:sharded:${process.pid}:${n++}`;
});
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
});

interface Engine {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  readonly fallbacks: ClusterFallbackEvent[];
}

async function engine(options: Partial<RedisClusterOptions> = {}): Promise<Engine> {
  const backend = redisCluster({
    client: redis.cluster.client(),
    prefix,
    now: () => clock.now(),
    timeoutMs: 2000,
    ...options,
  });
  backends.push(backend);
  await backend.ready();
  const fg = new Floodgate({ clock, cluster: backend });
  const fallbacks: ClusterFallbackEvent[] = [];
  fg.on('clusterFallback', (event) => fallbacks.push(event));
  return { fg, backend, fallbacks };
}

describe('redisCluster on a Redis Cluster', () => {
  it('lets two engines pass exactly the threshold of a global flow rule between them', async () => {
    const pair = [await engine(), await engine()];
    for (const e of pair) e.fg.loadFlowRules([{ resource: 'api', threshold: 7, cluster: { thresholdType: 'global' } }]);
    expect(await countPasses(Array.from({ length: 20 }, (_, i) => hit(pair[i % 2]!.fg, 'api')))).toBe(7);
    expect(pair.flatMap((e) => e.fallbacks)).toEqual([]);
  });

  it('checks an array-valued hotspot argument atomically across values without CROSSSLOT', async () => {
    const [a, b] = [await engine(), await engine()];
    for (const e of [a, b])
      e.fg.loadHotParamRules([{ resource: 'cart', paramIndex: 0, threshold: 2, cluster: { thresholdType: 'global' } }]);
    await hit(a.fg, 'cart', { args: [['sku-1', 'sku-2', 'sku-3']] });
    await hit(b.fg, 'cart', { args: [['sku-3', 'sku-4']] });
    // sku-3 is spent: the whole call is refused, and sku-4 is not charged.
    await expect(hit(a.fg, 'cart', { args: [['sku-4', 'sku-3']] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'sku-3',
    });
    await hit(b.fg, 'cart', { args: [['sku-4']] });
    expect([...a.fallbacks, ...b.fallbacks]).toEqual([]);
  });

  it('paces an array-valued throttle hotspot argument on one shared schedule', async () => {
    const [a, b] = [await engine(), await engine()];
    for (const e of [a, b])
      e.fg.loadHotParamRules([
        { resource: 'feed', paramIndex: 0, threshold: 10, behavior: 'throttle', cluster: { thresholdType: 'global' } },
      ]);
    await hit(a.fg, 'feed', { args: [['x', 'y']] });
    await expect(hit(b.fg, 'feed', { args: [['y', 'z']] })).rejects.toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'y',
    });
    await clock.advance(100);
    await hit(b.fg, 'feed', { args: [['y', 'z']] });
    expect([...a.fallbacks, ...b.fallbacks]).toEqual([]);
  });

  it('opens a shared circuit breaker on both engines, tells each of every transition, and lends its probe to one call', async () => {
    const pair = [await engine(), await engine()];
    const changes: string[][] = [[], []];
    pair.forEach((e, i) => e.fg.on('circuitStateChange', (event) => changes[i]!.push(`${event.from}->${event.to}`)));
    for (const e of pair)
      e.fg.loadCircuitBreakerRules([
        {
          resource: 'api',
          strategy: 'errorCount',
          threshold: 1,
          minRequestAmount: 1,
          retryTimeoutMs: 1000,
          cluster: true,
        },
      ]);
    // Subscribed to the breakers' channel (published from the slot's master, heard cluster-wide).
    for (const e of pair) await e.backend.ready();
    for (const e of pair) {
      const entry = await e.fg.enter('api');
      entry.traceError(new Error('boom'));
      entry.exit();
    }
    await until(
      () => pair.every((e) => e.fg.circuitState('api')[0]!.state === 'open'),
      'both engines to learn the breaker opened',
    );
    await clock.advance(1000);
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => pair[i % 2]!.fg.enter('api')));
    const probes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(probes).toHaveLength(1);
    probes[0]!.exit();
    await until(() => changes.every((list) => list.length === 3), 'both engines to learn the breaker closed');
    for (const list of changes) expect(list).toEqual(['closed->open', 'open->halfOpen', 'halfOpen->closed']);
    expect(pair.flatMap((e) => e.fallbacks)).toEqual([]);
  });

  it('keeps every key of one rule in one slot', async () => {
    const a = await engine();
    a.fg.loadHotParamRules([{ resource: 'user', paramIndex: 0, threshold: 5, cluster: { thresholdType: 'global' } }]);
    for (let i = 0; i < 20; i++) await hit(a.fg, 'user', { args: [`user-${i}`] });
    const slots = new Set<number>();
    for (const node of redis.cluster.nodes) {
      const admin = redis.cluster.node(node.port);
      const keys = (await admin.call('KEYS', `${prefix}:*`)) as string[];
      for (const key of keys) slots.add((await admin.call('CLUSTER', 'KEYSLOT', key)) as number);
    }
    expect(slots.size).toBe(1);
  });

  it('rides out a failover of the slot’s master under load: no call waits past its timeout, and limits are shared again', async () => {
    const timeoutMs = 300;
    const marginMs = 250;
    const pair = [
      await engine({ timeoutMs, failureThreshold: 3, coolDownMs: 200, now: () => Date.now() }),
      await engine({ timeoutMs, failureThreshold: 3, coolDownMs: 200, now: () => Date.now() }),
    ];
    const rule = { resource: 'api', threshold: 1e9, cluster: { thresholdType: 'global' as const } };
    for (const e of pair) e.fg.loadFlowRules([rule]);
    const ruleKey = `${prefix}:w:{flow|api|reject|default#0}`;
    let stop = false;
    let calls = 0;
    let slowest = 0;
    const loopDelay = watchLoopDelay();
    const failures: unknown[] = [];
    const load = async (fg: Floodgate): Promise<void> => {
      while (!stop) {
        const started = performance.now();
        try {
          await hit(fg, 'api');
        } catch (error) {
          if (!isBlockError(error)) failures.push(error);
        }
        slowest = Math.max(slowest, performance.now() - started);
        calls++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const workers = pair.flatMap((e) => Array.from({ length: 16 }, () => load(e.fg)));
    try {
      const before = await redis.cluster.masterOf(ruleKey);
      const after = await redis.cluster.failover(ruleKey);
      expect(after).not.toBe(before);
      // Keep the load on until both engines take their answers from Redis again.
      const deadline = Date.now() + 10_000;
      while (pair.some((e) => e.backend.isDown) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pair.map((e) => e.backend.isDown)).toEqual([false, false]);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(100);
    loopDelay.stop();
    // No call waits past its timeout plus the margin, beyond what the machine held the process up.
    expect(slowest).toBeLessThan(timeoutMs + marginMs + loopDelay.maxMs());

    // Shared limiting after the failover: a new rule on the same slot's new master is exact.
    for (const e of pair)
      e.fg.loadFlowRules([rule, { resource: 'after', threshold: 9, cluster: { thresholdType: 'global' } }]);
    expect(await countPasses(Array.from({ length: 30 }, (_, i) => hit(pair[i % 2]!.fg, 'after')))).toBe(9);
  }, 60_000);
});
