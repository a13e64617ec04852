import { Floodgate, isBlockError } from '@floodgate/core';
import type { CircuitBreakerRuleOptions } from '@floodgate/core/rules';
import type { CircuitStateChangeEvent, ClusterFallbackEvent, ClusterRecoverEvent } from '@floodgate/core/metrics';
import { redisCluster, type RedisClusterBackend } from '@floodgate/redis';
import Redis from 'ioredis';
import { useOwnRedis } from './support/cluster-fixture';
import { until } from '../support/until';

// A shared breaker while Redis is away: each instance decides by its local breaker (after an
// open shared breaker's deadline) and says so; when Redis is back, the shared breaker decides
// again, with the local one beside it until it closes. This file pauses Redis, so it runs its
// own redis-server.

const own = useOwnRedis('fg-test:breaker-outage');

interface Instance {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  readonly changes: string[];
  readonly fallbacks: ClusterFallbackEvent[];
  readonly recoveries: ClusterRecoverEvent[];
}

/** An instance whose backend waits 20 ms for Redis and skips it for 1 s after 2 failures. */
async function instance(rule: CircuitBreakerRuleOptions): Promise<Instance> {
  const client = new Redis(own.server.url, { retryStrategy: () => 5, maxRetriesPerRequest: 1 });
  own.fixture.clients.push(client);
  const backend = redisCluster({
    client,
    prefix: own.fixture.prefix,
    now: () => own.fixture.clock.now(),
    timeoutMs: 20,
    failureThreshold: 2,
    coolDownMs: 1000,
    onError: () => undefined,
  });
  own.fixture.backends.push(backend);
  const fg = new Floodgate({ clock: own.fixture.clock, cluster: backend });
  fg.loadCircuitBreakerRules([rule]);
  await backend.ready();
  const changes: string[] = [];
  const fallbacks: ClusterFallbackEvent[] = [];
  const recoveries: ClusterRecoverEvent[] = [];
  fg.on('circuitStateChange', (e: CircuitStateChangeEvent) => changes.push(`${e.from}->${e.to}`));
  fg.on('clusterFallback', (e) => fallbacks.push(e));
  fg.on('clusterRecover', (e) => recoveries.push(e));
  return { fg, backend, changes, fallbacks, recoveries };
}

/** 'pass', or the code of the block error. */
async function call(x: Instance, outcome: 'ok' | 'error' = 'ok'): Promise<string> {
  let entry;
  try {
    entry = await x.fg.enter('api');
  } catch (error) {
    if (isBlockError(error)) return error.code;
    throw error;
  }
  if (outcome === 'error') entry.traceError(new Error('boom'));
  entry.exit();
  return 'pass';
}

const pause = (): Promise<unknown> => own.admin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
const stateOf = (x: Instance): string | undefined => x.fg.circuitState('api')[0]?.state;

/** Opens on the first error: what one instance sees alone is enough for its local breaker. */
const EAGER: CircuitBreakerRuleOptions = {
  resource: 'api',
  strategy: 'errorCount',
  threshold: 0,
  minRequestAmount: 1,
  retryTimeoutMs: 3000,
  cluster: true,
};

describe('a shared breaker while Redis is away', () => {
  it('falls back to its local breaker, saying so, once the completions it reports go unanswered', async () => {
    const x = await instance(EAGER);
    expect(await call(x)).toBe('pass');
    await pause();
    // Closed as last learned: the call passes without Redis; its error never reaches Redis.
    expect(await call(x, 'error')).toBe('pass');
    await until(() => x.fallbacks.length > 0, 'the report to time out');
    expect(x.fallbacks[0]).toMatchObject({ resource: 'api', backend: 'redis', reason: 'timeout', decidedBy: 'local' });
    expect(x.changes).toEqual(['closed->open']);
    expect(await call(x)).toBe('ERR_CIRCUIT_OPEN');
    expect(x.fallbacks.length).toBeGreaterThan(1);
  });

  it('keeps refusing until an open shared breaker’s deadline, then lets its local breaker decide', async () => {
    const rule: CircuitBreakerRuleOptions = {
      resource: 'api',
      strategy: 'errorRatio',
      threshold: 0.5,
      minRequestAmount: 6,
      retryTimeoutMs: 3000,
      cluster: true,
    };
    const [a, b] = [await instance(rule), await instance(rule)];
    for (const x of [a, b])
      for (const outcome of ['ok', 'error', 'error'] as const) expect(await call(x, outcome)).toBe('pass');
    await until(() => stateOf(a) === 'open' && stateOf(b) === 'open', 'both to learn the shared breaker opened');
    await pause();
    await own.fixture.clock.advance(2000);
    expect(a.fg.circuitState('api')[0]).toMatchObject({ state: 'open', retryAfterMs: 1000 });
    await expect(a.fg.enter('api')).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', retryAfterMs: 1000 });
    await own.fixture.clock.advance(1000);
    // Due to probe, but Redis cannot lend a probe: a's own breaker (3 calls, under
    // minRequestAmount: closed) decides.
    expect(await call(a)).toBe('pass');
    expect(a.fallbacks.map((e) => e.decidedBy)).toEqual(['local', 'local']);
    expect(a.changes).toEqual(['closed->open', 'open->closed']);
  });

  it('returns to the shared breaker when Redis answers again, keeping the local breaker in force until it closes', async () => {
    const x = await instance(EAGER);
    expect(await call(x)).toBe('pass');
    await own.server.stop();
    expect(await call(x, 'error')).toBe('pass');
    await until(() => x.fallbacks.length > 0, 'the report to fail');
    expect(await call(x)).toBe('ERR_CIRCUIT_OPEN');
    expect(x.backend.isDown).toBe(true);
    await own.server.restart();
    await until(() => own.fixture.clients.every((c) => c.status === 'ready'), 'the client to reconnect');
    await own.fixture.clock.advance(1000);
    // Redis answers (a new server: the shared breaker never saw the error), the local one is still open.
    expect(await call(x)).toBe('ERR_CIRCUIT_OPEN');
    expect(x.recoveries).toHaveLength(1);
    expect(stateOf(x)).toBe('open');
    await own.fixture.clock.advance(2000);
    // The local breaker's probe succeeds: it closes, and the shared breaker alone decides again.
    expect(await call(x)).toBe('pass');
    expect(x.changes).toEqual(['closed->open', 'open->halfOpen', 'halfOpen->closed']);
    expect(await call(x)).toBe('pass');
    expect(stateOf(x)).toBe('closed');
  });
});
