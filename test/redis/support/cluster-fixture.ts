import { Floodgate } from '@floodgate/core';
import { redisCluster, type RedisClusterBackend, type RedisClusterOptions } from '@floodgate/redis';
import Redis from 'ioredis';
import { startRedisServer, type RedisServer } from '../../support/test-services';
import { WatchedClock } from '../../support/watched-clock';

/** The timeout of backends in tests that are not about timeouts. */
export const HEALTHY_TIMEOUT_MS = 2000;

/** A time on the 500 ms bucket grid, so a test starts at the beginning of a bucket. */
export const T0 = 1_700_000_000_000;

/**
 * Engines sharing one Redis and one ManualClock (the backends take their shared time from it),
 * as separate processes would share Redis and a synchronised clock. Each fixture uses its own
 * key prefix, so tests and test files never see each other's keys.
 */
export class ClusterFixture {
  /** Tells when a call starts waiting on it (a queued call): {@link WatchedClock.nextSleep}. */
  readonly clock = new WatchedClock(T0);
  readonly clients: Redis[] = [];
  readonly backends: RedisClusterBackend[] = [];

  constructor(
    readonly url: string,
    readonly prefix: string,
  ) {}

  /** An ioredis client, closed with the fixture. */
  client(): Redis {
    const client = new Redis(this.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    this.clients.push(client);
    return client;
  }

  /**
   * A backend on its own client, on the fixture's prefix and clock, ready. Its timeout is
   * generous (these tests are not about timeouts): on a loaded machine a 20 ms real-time timeout
   * could expire before a healthy Redis answers, and the check would fall back.
   */
  async backend(options: Partial<RedisClusterOptions> = {}): Promise<RedisClusterBackend> {
    const backend = redisCluster({
      client: this.client(),
      prefix: this.prefix,
      now: () => this.clock.now(),
      timeoutMs: HEALTHY_TIMEOUT_MS,
      ...options,
    });
    this.backends.push(backend);
    await backend.ready();
    return backend;
  }

  /** An engine on a new backend. */
  async engine(options: Partial<RedisClusterOptions> = {}): Promise<Floodgate> {
    return new Floodgate({ clock: this.clock, cluster: await this.backend(options) });
  }

  async close(): Promise<void> {
    await Promise.all(this.backends.map((backend) => backend.close().catch(() => undefined)));
    for (const client of this.clients) client.disconnect();
  }
}

/** Resolves to the number of calls that passed among `calls`. */
export async function countPasses(calls: readonly Promise<unknown>[]): Promise<number> {
  const results = await Promise.allSettled(calls);
  for (const r of results)
    if (
      r.status === 'rejected' &&
      (r.reason as { code?: string }).code !== 'ERR_FLOW_BLOCKED' &&
      (r.reason as { code?: string }).code !== 'ERR_HOT_PARAM_BLOCKED'
    )
      throw r.reason;
  return results.filter((r) => r.status === 'fulfilled').length;
}

/** Enters `resource` on `fg` and exits at once; rejects with the block error. */
export async function hit(
  fg: Floodgate,
  resource: string,
  options: { args?: unknown[]; acquireCount?: number; origin?: string } = {},
): Promise<void> {
  const entry = await fg.enter(resource, options);
  entry.exit();
}

/** What {@link useOwnRedis} gives a test file; read it inside tests and hooks. */
export interface OwnRedis {
  /** The file's own redis-server, to pause, stop or restart. */
  readonly server: RedisServer;
  /** An admin connection to it (reconnects after a restart). */
  readonly admin: Redis;
  /** A fresh fixture on it for the current test. */
  readonly fixture: ClusterFixture;
}

/**
 * For test files that pause, stop or restart Redis, and so never use the shared one: a
 * redis-server of the file's own (started in `beforeAll`, stopped in `afterAll`), an admin
 * connection to it, and a fixture per test under `prefix`, closed after the test once any
 * `CLIENT PAUSE` is lifted.
 */
export function useOwnRedis(prefix: string): OwnRedis {
  let server: RedisServer | undefined;
  let admin: Redis | undefined;
  let fixture: ClusterFixture | undefined;
  let n = 0;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url, { retryStrategy: () => 5 });
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  beforeEach(() => {
    fixture = new ClusterFixture(server!.url, `${prefix}:${n++}`);
  });
  afterEach(async () => {
    if (admin?.status === 'ready') await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await fixture?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useOwnRedis(): read it inside a test or hook');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get admin() {
      return started(admin);
    },
    get fixture() {
      return started(fixture);
    },
  };
}
