/**
 * One instance of a quote service in cluster mode: its engine takes the `GET /quote` limit
 * from Redis, so 10 quotes per second is the limit of the whole fleet, not of each process; and
 * the circuit breaker guarding its exchange-rate upstream (`GET /rates`) is shared, so when the
 * instances together see the upstream fail, every instance stops calling it.
 */
import { Floodgate, isBlockError } from '@floodgate/core';
import type { CircuitStateChangeEvent, ClusterFallbackEvent } from '@floodgate/core/metrics';
import { redisCluster, type RedisClusterBackend } from '@floodgate/redis';
import Redis from 'ioredis';

/** The fleet-wide limit of the example. */
export const QUOTES_PER_SECOND = 10;

/**
 * The shared breaker on the rates upstream: open when more than half of at least 10 calls in a
 * second, from any instance, failed; probe again after 10 s.
 */
export const RATES_BREAKER = Object.freeze({
  resource: 'GET /rates',
  strategy: 'errorRatio',
  threshold: 0.5,
  minRequestAmount: 10,
  retryTimeoutMs: 10_000,
  cluster: true,
} as const);

/** Options of {@link createInstance}. */
export interface InstanceOptions {
  /** Where Redis is. */
  readonly redisUrl: string;
  /** Key prefix, so runs do not share counts. @defaultValue 'floodgate-example' */
  readonly prefix?: string;
  /** Shared time in ms (tests pin it); by default Redis's own clock. */
  readonly now?: () => number;
}

/** A running instance: its engine, and request handlers guarded by the shared rules. */
export interface Instance {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  /** Serves one quote request: `'quote'`, or `'429'` when the fleet is over its limit. */
  handle(): Promise<'quote' | '429'>;
  /**
   * Serves one rates request through the shared breaker: `'rates'`, `'502'` when the upstream
   * failed, or `'503'` while the breaker is open.
   */
  rates(upstream: () => Promise<string>): Promise<'rates' | '502' | '503'>;
  /** The checks decided without Redis (none while Redis is up). */
  readonly fallbacks: ClusterFallbackEvent[];
  /** The rates breaker's transitions, as this instance saw them. */
  readonly changes: CircuitStateChangeEvent[];
  close(): Promise<void>;
}

/** Starts an instance (connected to Redis, rules loaded); does not serve anything by itself. */
export async function createInstance(options: InstanceOptions): Promise<Instance> {
  const client = new Redis(options.redisUrl);
  const backend = redisCluster({
    client,
    prefix: options.prefix ?? 'floodgate-example',
    ...(options.now ? { now: options.now } : {}),
    // Generous for a demo that starts two processes at once on a possibly busy machine.
    timeoutMs: 1000,
  });
  const fg = new Floodgate({ cluster: backend });
  fg.loadRules({
    flow: [{ resource: 'GET /quote', threshold: QUOTES_PER_SECOND, cluster: { thresholdType: 'global' } }],
    circuitBreakers: [RATES_BREAKER],
  });
  // Connected, and subscribed to the shared breakers' transitions.
  await backend.ready();
  const fallbacks: ClusterFallbackEvent[] = [];
  const changes: CircuitStateChangeEvent[] = [];
  fg.on('clusterFallback', (event) => fallbacks.push(event));
  fg.on('circuitStateChange', (event) => changes.push(event));
  return {
    fg,
    backend,
    fallbacks,
    changes,
    async handle() {
      try {
        return await fg.run('GET /quote', () => 'quote' as const);
      } catch (error) {
        if (isBlockError(error)) return '429';
        throw error;
      }
    },
    async rates(upstream) {
      try {
        await fg.run('GET /rates', () => upstream());
        return 'rates';
      } catch (error) {
        return isBlockError(error) ? '503' : '502';
      }
    },
    async close() {
      await backend.close();
      client.disconnect();
    },
  };
}
