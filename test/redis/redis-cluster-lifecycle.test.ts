import { performance } from 'node:perf_hooks';
import { Floodgate } from '@floodgate/core';
import type { ClusterFallbackEvent } from '@floodgate/core/metrics';
import {
  redisCluster,
  redisRuleSource,
  RedisVersionError,
  toRedisCommander,
  type RedisClusterBackend,
  type RedisCommander,
} from '@floodgate/redis';
import Redis from 'ioredis';
import { createCluster } from 'redis';
import { hit } from './support/cluster-fixture';
import { freePort, startRedisServer, type RedisServer } from '../support/test-services';

// This file freezes Redis (SIGSTOP), so it always runs its own redis-server.

let server: RedisServer;
const clients: Redis[] = [];
const backends: RedisClusterBackend[] = [];
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  server.thaw();
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
  for (const client of clients.splice(0)) client.disconnect();
});

function client(url = server.url): Redis {
  const c = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
}

/** How long `promise` took to settle, in real ms, and how. */
async function timed(promise: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  let error: unknown;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  return { ms: performance.now() - started, error };
}

/** A real connection whose INFO reports an older server, as Redis 4 answers it. */
function reportingVersion(inner: RedisCommander, version: string): RedisCommander {
  return {
    async send(args) {
      const reply = await inner.send(args);
      return args[0] === 'INFO' ? String(reply).replace(/^redis_version:.*$/m, `redis_version:${version}\r`) : reply;
    },
    isReady: () => inner.isReady(),
    whenReady: () => inner.whenReady(),
    setAndPublish: (key, channel, value) => inner.setAndPublish(key, channel, value),
    subscribe: (channel, handlers) => inner.subscribe(channel, handlers),
  };
}

describe('redisCluster ready()', () => {
  it('resolves against a running Redis', async () => {
    const backend = redisCluster({ client: client(), prefix: `fg-test:life:${n++}` });
    backends.push(backend);
    await expect(backend.ready()).resolves.toBeUndefined();
  });

  it('rejects after readyTimeoutMs when Redis is unreachable, naming the option', async () => {
    const backend = redisCluster({ client: client(`redis://127.0.0.1:${await freePort()}`), readyTimeoutMs: 200 });
    backends.push(backend);
    const { ms, error } = await timed(backend.ready());
    expect(error).toMatchObject({ message: expect.stringContaining('readyTimeoutMs (200 ms)') });
    expect(ms).toBeLessThan(200 + 500);
  });

  it('rejects after readyTimeoutMs when Redis is frozen', async () => {
    const c = client();
    await c.ping();
    server.freeze();
    const backend = redisCluster({ client: c, readyTimeoutMs: 200 });
    backends.push(backend);
    const { ms, error } = await timed(backend.ready());
    expect(error).toMatchObject({ message: expect.stringContaining('did not answer') });
    expect(ms).toBeLessThan(200 + 500);
  });

  it('refuses a server older than Redis 5 with a RedisVersionError, and every check then falls back', async () => {
    const errors: unknown[] = [];
    const backend = redisCluster({
      client: reportingVersion(toRedisCommander(client()), '4.0.14'),
      prefix: `fg-test:life:${n++}`,
      onError: (e) => errors.push(e),
    });
    backends.push(backend);
    await expect(backend.ready()).rejects.toBeInstanceOf(RedisVersionError);
    await expect(backend.ready()).rejects.toThrow(
      'needs Redis >= 5.0.0 (its scripts read TIME before writing, which Redis allows from 5.0), but the server reports redis_version 4.0.14',
    );
    expect(errors).toEqual([expect.any(RedisVersionError)]);
    const fg = new Floodgate({ cluster: backend });
    fg.loadFlowRules([{ resource: 'api', threshold: 1, cluster: { thresholdType: 'global' } }]);
    const fallbacks: ClusterFallbackEvent[] = [];
    fg.on('clusterFallback', (event) => fallbacks.push(event));
    await hit(fg, 'api');
    await expect(hit(fg, 'api')).rejects.toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    expect(fallbacks.map((e) => [e.reason, (e.error as Error).name])).toEqual([
      ['error', 'RedisVersionError'],
      ['error', 'RedisVersionError'],
    ]);
  });

  it('accepts Redis 5.0 and later', async () => {
    for (const version of ['5.0.0', '6.2.14', '7.2.4', '10.0.0']) {
      const backend = redisCluster({
        client: reportingVersion(toRedisCommander(client()), version),
        prefix: `fg-test:life:${n++}`,
      });
      backends.push(backend);
      await expect(backend.ready()).resolves.toBeUndefined();
    }
  });
});

describe('redisCluster close()', () => {
  it('resolves within closeTimeoutMs while Redis is frozen, telling onError', async () => {
    const errors: unknown[] = [];
    const backend = redisCluster({
      client: client(),
      prefix: `fg-test:life:${n++}`,
      closeTimeoutMs: 200,
      onError: (e) => errors.push(e),
    });
    await backend.ready();
    const fg = new Floodgate({ cluster: backend });
    fg.loadFlowRules([{ resource: 'api', threshold: 3, cluster: { thresholdType: 'perInstance' } }]);
    await backend.heartbeat();
    server.freeze();
    const { ms, error } = await timed(backend.close());
    expect(error).toBeUndefined();
    expect(ms).toBeLessThan(200 + 500);
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringContaining('closeTimeoutMs (200 ms)') })]);
  });

  it('returns the same promise when called twice', async () => {
    const backend = redisCluster({ client: client(), prefix: `fg-test:life:${n++}` });
    await backend.ready();
    expect(backend.close()).toBe(backend.close());
  });
});

describe('redisRuleSource close()', () => {
  it('resolves within closeTimeoutMs while Redis is frozen', async () => {
    const source = await redisRuleSource({
      client: client(),
      key: `fg-test:life:rules:${n}`,
      channel: `fg-test:life:rules:${n++}`,
      floodgate: new Floodgate(),
      closeTimeoutMs: 200,
    });
    server.freeze();
    const { ms, error } = await timed(source.close());
    expect(error).toBeUndefined();
    expect(ms).toBeLessThan(200 + 500);
  });

  it('rejects a closeTimeoutMs that is not a positive number', async () => {
    await expect(redisRuleSource({ client: client(), key: 'k', channel: 'c', closeTimeoutMs: 0 })).rejects.toThrow(
      'closeTimeoutMs must be a finite number > 0, got 0',
    );
  });
});

describe('toRedisCommander with node-redis cluster clients', () => {
  it("refuses node-redis's createCluster() client, naming ioredis's Redis.Cluster", () => {
    const cluster = createCluster({ rootNodes: [{ url: server.url }] });
    expect(() => redisCluster({ client: cluster })).toThrow(
      "node-redis's cluster client (createCluster()) is not supported; use ioredis's Redis.Cluster",
    );
  });
});
