import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import {
  publishRules,
  redisCluster,
  redisRuleSource,
  toRedisCommander,
  type RedisClusterBackend,
} from '@floodgate/redis';
import Redis from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import { countPasses, HEALTHY_TIMEOUT_MS, hit, T0 } from './support/cluster-fixture';
import { testRedisUrl } from '../support/test-services';

const redisUrl = testRedisUrl();
let nodeClients: RedisClientType[];
let backends: RedisClusterBackend[];
let prefix: string;
let n = 0;

beforeEach(() => {
  nodeClients = [];
  backends = [];
  prefix = `fg-test:commander:${process.pid}:${n++}`;
});
afterEach(async () => {
  await Promise.all(backends.map((backend) => backend.close()));
  for (const client of nodeClients) if (client.isOpen) client.destroy();
});

async function nodeRedis(): Promise<RedisClientType> {
  const client = createClient({ url: redisUrl }) as RedisClientType;
  client.on('error', () => undefined);
  nodeClients.push(client);
  await client.connect();
  return client;
}

describe('toRedisCommander with node-redis v5', () => {
  it('serves as the cluster backend: two engines share one limit', async () => {
    const clock = new ManualClock(T0);
    const engines: Floodgate[] = [];
    for (let i = 0; i < 2; i++) {
      const backend = redisCluster({
        client: await nodeRedis(),
        prefix,
        now: () => clock.now(),
        timeoutMs: HEALTHY_TIMEOUT_MS,
      });
      backends.push(backend);
      await backend.ready();
      const fg = new Floodgate({ clock, cluster: backend });
      fg.loadFlowRules([{ resource: 'api', threshold: 4, cluster: { thresholdType: 'global' } }]);
      engines.push(fg);
    }
    expect(await countPasses(Array.from({ length: 10 }, (_, i) => hit(engines[i % 2]!, 'api')))).toBe(4);
  });

  it('sends a script again after SCRIPT FLUSH', async () => {
    const clock = new ManualClock(T0);
    const client = await nodeRedis();
    const backend = redisCluster({ client, prefix, now: () => clock.now(), timeoutMs: HEALTHY_TIMEOUT_MS });
    backends.push(backend);
    const fg = new Floodgate({ clock, cluster: backend });
    fg.loadFlowRules([{ resource: 'api', threshold: 1, cluster: {} }]);
    await backend.ready();
    await client.sendCommand(['SCRIPT', 'FLUSH']);
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
  });

  it('falls back at once when the client is closed', async () => {
    const clock = new ManualClock(T0);
    const client = await nodeRedis();
    const backend = redisCluster({ client, prefix, now: () => clock.now(), timeoutMs: HEALTHY_TIMEOUT_MS });
    backends.push(backend);
    const fg = new Floodgate({ clock, cluster: backend });
    fg.loadFlowRules([{ resource: 'api', threshold: 1, cluster: {} }]);
    const reasons: string[] = [];
    fg.on('clusterFallback', (event) => reasons.push(event.reason));
    client.destroy();
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(reasons).toEqual(['notReady', 'notReady']);
  });

  it('follows and publishes rules', async () => {
    const key = `${prefix}:rules`;
    const fg = new Floodgate();
    const source = await redisRuleSource({ client: await nodeRedis(), key, channel: key, floodgate: fg });
    try {
      const loaded = new Promise((resolve) => fg.on('rulesLoaded', resolve));
      await publishRules(await nodeRedis(), { key, channel: key }, { flow: [{ resource: 'api', threshold: 3 }] });
      await loaded;
      expect(fg.getRules().flow).toEqual([expect.objectContaining({ threshold: 3 })]);
    } finally {
      await source.close();
    }
  });
});

describe('toRedisCommander', () => {
  it('takes a commander as it is', () => {
    const client = new Redis({ lazyConnect: true });
    const commander = toRedisCommander(client);
    expect(toRedisCommander(commander)).toBe(commander);
    client.disconnect();
  });

  it('refuses what is not a Redis client', () => {
    expect(() => toRedisCommander({ get: () => undefined })).toThrow(
      'client must be an ioredis client, a node-redis client or a RedisCommander',
    );
  });
});
