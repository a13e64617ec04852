import { Floodgate, isBlockError } from '@floodgate/core';
import type { FlowRuleOptions } from '@floodgate/core/rules';
import type { ClusterFallbackEvent, ClusterRecoverEvent } from '@floodgate/core/metrics';
import { redisCluster, type RedisClusterBackend } from '@floodgate/redis';
import Redis from 'ioredis';
import { HEALTHY_TIMEOUT_MS, hit, useOwnRedis } from './support/cluster-fixture';
import { until } from '../support/until';
import { freePort } from '../support/test-services';

// This file pauses and stops Redis, so it always runs its own redis-server, never the shared one.

const own = useOwnRedis('fg-test:outage');

const rule = (extra: Partial<FlowRuleOptions> = {}): FlowRuleOptions => ({
  resource: 'api',
  threshold: 2,
  cluster: { thresholdType: 'global' },
  ...extra,
});

interface Watched {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  readonly client: Redis;
  readonly fallbacks: ClusterFallbackEvent[];
  readonly recoveries: ClusterRecoverEvent[];
}

/**
 * An engine whose backend waits `timeoutMs` for Redis: short for the tests that pause Redis
 * (every call then waits it out), generous where Redis is healthy or stopped, so that a loaded
 * machine cannot turn a slow healthy answer into a fallback.
 */
async function watchedEngine(rules: FlowRuleOptions[], timeoutMs = 20): Promise<Watched> {
  const client = new Redis(own.server.url, { retryStrategy: () => 5, maxRetriesPerRequest: 1 });
  own.fixture.clients.push(client);
  const backend = redisCluster({
    client,
    prefix: own.fixture.prefix,
    now: () => own.fixture.clock.now(),
    timeoutMs,
    failureThreshold: 2,
    coolDownMs: 1000,
  });
  own.fixture.backends.push(backend);
  await backend.ready();
  const fg = new Floodgate({ clock: own.fixture.clock, cluster: backend });
  fg.loadFlowRules(rules);
  const fallbacks: ClusterFallbackEvent[] = [];
  const recoveries: ClusterRecoverEvent[] = [];
  fg.on('clusterFallback', (event) => fallbacks.push(event));
  fg.on('clusterRecover', (event) => recoveries.push(event));
  return { fg, backend, client, fallbacks, recoveries };
}

/** Runs `body` while Redis holds every write command (scripts included) unanswered. */
async function whilePaused(body: () => Promise<void>): Promise<void> {
  await own.admin.call('CLIENT', 'PAUSE', '30000', 'WRITE');
  try {
    await body();
  } finally {
    await own.admin.call('CLIENT', 'UNPAUSE');
  }
}

/** 'pass', or the code of the block error; anything else is thrown (a request that failed). */
async function outcome(fg: Floodgate): Promise<string> {
  try {
    await hit(fg, 'api');
    return 'pass';
  } catch (error) {
    if (isBlockError(error)) return error.code;
    throw error;
  }
}

describe('redisCluster when Redis is paused', () => {
  it('decides by the local rule without waiting for Redis to answer', async () => {
    const w = await watchedEngine([rule()]);
    await whilePaused(async () => {
      expect([await outcome(w.fg), await outcome(w.fg), await outcome(w.fg)]).toEqual([
        'pass',
        'pass',
        'ERR_FLOW_BLOCKED',
      ]);
    });
  });

  it('emits clusterFallback for each call it decides without Redis, naming why', async () => {
    const w = await watchedEngine([rule()]);
    await whilePaused(async () => {
      for (let i = 0; i < 3; i++) await outcome(w.fg);
    });
    expect(w.fallbacks.map((e) => [e.reason, e.decidedBy, e.backend, e.resource])).toEqual([
      ['timeout', 'local', 'redis', 'api'],
      ['timeout', 'local', 'redis', 'api'],
      ['breakerOpen', 'local', 'redis', 'api'],
    ]);
    expect(w.fallbacks[0]!.rule).toBe(w.fg.getRules().flow[0]);
  });

  it('stops asking Redis after failureThreshold timeouts in a row', async () => {
    const w = await watchedEngine([rule({ threshold: 100 })]);
    await whilePaused(async () => {
      await outcome(w.fg);
      expect(w.backend.isDown).toBe(false);
      await outcome(w.fg);
      expect(w.backend.isDown).toBe(true);
      const results = await Promise.all(Array.from({ length: 20 }, () => outcome(w.fg)));
      expect(results.every((r) => r === 'pass')).toBe(true);
    });
    expect(w.fallbacks.slice(2).every((e) => e.reason === 'breakerOpen')).toBe(true);
  });

  it('lets calls pass when the rule does not fall back to local', async () => {
    const w = await watchedEngine([
      rule({ threshold: 1, cluster: { thresholdType: 'global', fallbackToLocal: false } }),
    ]);
    await whilePaused(async () => {
      expect([await outcome(w.fg), await outcome(w.fg), await outcome(w.fg)]).toEqual(['pass', 'pass', 'pass']);
    });
    expect(w.fallbacks.map((e) => e.decidedBy)).toEqual(['pass', 'pass', 'pass']);
  });

  it('keeps skipping Redis until the cool-down is over, even once it answers again', async () => {
    const w = await watchedEngine([rule()]);
    await whilePaused(async () => {
      await outcome(w.fg);
      await outcome(w.fg);
    });
    await own.fixture.clock.advance(999);
    await outcome(w.fg);
    expect(w.fallbacks.at(-1)!.reason).toBe('breakerOpen');
    expect(w.backend.isDown).toBe(true);
  });

  it('recovers with the first call after the cool-down and emits clusterRecover', async () => {
    const w = await watchedEngine([rule()]);
    await whilePaused(async () => {
      await outcome(w.fg);
      await outcome(w.fg);
    });
    // The probe waits 20 ms for a healthy Redis; on a loaded machine it may miss that, and the
    // breaker then waits another cool-down: probe until Redis is back.
    for (let i = 0; i < 10 && w.backend.isDown; i++) {
      await own.fixture.clock.advance(1000);
      expect(await outcome(w.fg)).toBe('pass');
    }
    expect(w.backend.isDown).toBe(false);
    expect(w.recoveries).toEqual([{ backend: 'redis', downForMs: expect.any(Number) }]);
    expect(w.recoveries[0]!.downForMs % 1000).toBe(0);
    expect(w.recoveries[0]!.downForMs).toBeGreaterThanOrEqual(1000);
    expect(w.fallbacks.every((e) => e.reason !== 'error')).toBe(true);
  });

  it('reopens for another cool-down when the probe times out too', async () => {
    const w = await watchedEngine([rule()]);
    await whilePaused(async () => {
      await outcome(w.fg);
      await outcome(w.fg);
      await own.fixture.clock.advance(1000);
      await outcome(w.fg);
      await outcome(w.fg);
    });
    expect(w.fallbacks.map((e) => e.reason)).toEqual(['timeout', 'timeout', 'timeout', 'breakerOpen']);
    expect(w.backend.isDown).toBe(true);
    expect(w.recoveries).toEqual([]);
  });
});

describe('redisCluster when Redis answers with an error', () => {
  it('falls back with the error Redis gave', async () => {
    const w = await watchedEngine([rule()], HEALTHY_TIMEOUT_MS);
    await own.admin.set(`${own.fixture.prefix}:w:{flow|api|reject|default#0}`, 'not a hash');
    expect(await outcome(w.fg)).toBe('pass');
    expect(w.fallbacks).toEqual([
      expect.objectContaining({
        reason: 'error',
        error: expect.objectContaining({ message: expect.stringContaining('WRONGTYPE') }),
      }),
    ]);
  });
});

describe('redisCluster when Redis is stopped', () => {
  it('falls back at once, recovers when Redis is back, and never fails a request', async () => {
    const w = await watchedEngine([rule({ threshold: 3 })], HEALTHY_TIMEOUT_MS);
    expect(await outcome(w.fg)).toBe('pass');
    await own.server.stop();
    try {
      await until(() => w.client.status !== 'ready', 'the client to notice');
      const down = [await outcome(w.fg), await outcome(w.fg), await outcome(w.fg)];
      expect(down).toEqual(['pass', 'pass', 'ERR_FLOW_BLOCKED']);
      expect(w.fallbacks.map((e) => e.reason)).toEqual(['notReady', 'notReady', 'breakerOpen']);
    } finally {
      await own.server.restart();
    }
    await until(() => w.client.status === 'ready', 'the client to reconnect');
    await own.fixture.clock.advance(1000);
    // The restarted Redis holds no scripts: the probe meets NOSCRIPT and sends the script again.
    expect([await outcome(w.fg), await outcome(w.fg), await outcome(w.fg), await outcome(w.fg)]).toEqual([
      'pass',
      'pass',
      'pass',
      'ERR_FLOW_BLOCKED',
    ]);
    expect(w.recoveries).toEqual([{ backend: 'redis', downForMs: 1000 }]);
    expect(w.fallbacks).toHaveLength(3);
  });
});

describe('concurrent bursts while Redis is away (the local fallback admits atomically with its check)', () => {
  const burstRule = rule({ threshold: 10 });

  /** `count` run() calls at once on `engines` in turn; resolves to how many passed. */
  async function burstPasses(engines: readonly Floodgate[], count: number): Promise<number> {
    const outcomes = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        engines[i % engines.length]!.run('api', () => true, { blockHandler: () => false }),
      ),
    );
    return outcomes.filter(Boolean).length;
  }

  it('passes only the local threshold of 40 concurrent calls when Redis is unreachable', async () => {
    const client = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      maxRetriesPerRequest: 1,
      retryStrategy: () => 50,
      lazyConnect: false,
    });
    client.on('error', () => undefined);
    own.fixture.clients.push(client);
    const backend = redisCluster({ client, prefix: own.fixture.prefix, timeoutMs: 20 });
    own.fixture.backends.push(backend);
    const fg = new Floodgate({ clock: own.fixture.clock, cluster: backend });
    fg.loadFlowRules([burstRule]);
    expect(await burstPasses([fg], 40)).toBe(10);
  });

  it('passes only the local threshold of 40 concurrent calls while Redis is paused', async () => {
    const w = await watchedEngine([burstRule]);
    await whilePaused(async () => {
      expect(await burstPasses([w.fg], 40)).toBe(10);
    });
  });

  it('keeps two engines that do not wait for ready() within their local thresholds at start-up', async () => {
    // As the README sets them up: no `await backend.ready()` before the first calls.
    const engines = [0, 1].map(() => {
      const client = new Redis(own.server.url, { maxRetriesPerRequest: 1 });
      own.fixture.clients.push(client);
      const backend = redisCluster({ client, prefix: own.fixture.prefix });
      own.fixture.backends.push(backend);
      const fg = new Floodgate({ clock: own.fixture.clock, cluster: backend });
      fg.loadFlowRules([burstRule]);
      return fg;
    });
    expect(await burstPasses(engines, 40)).toBeLessThanOrEqual(10 * engines.length);
  });
});
