/**
 * One instance of a quote service in cluster mode: its engine takes the `GET /quote` limit
 * from Redis, so 10 quotes per second is the limit of the whole fleet, not of each process.
 */
import { Floodgate, isBlockError, type ClusterFallbackEvent } from '@floodgate/core';
import { redisCluster, type RedisClusterBackend } from '@floodgate/redis';
import Redis from 'ioredis';

/** The fleet-wide limit of the example. */
export const QUOTES_PER_SECOND = 10;

/** Options of {@link createInstance}. */
export interface InstanceOptions {
  /** Where Redis is. */
  readonly redisUrl: string;
  /** Key prefix, so runs do not share counts. @defaultValue 'floodgate-example' */
  readonly prefix?: string;
  /** Shared time in ms (tests pin it); by default Redis's own clock. */
  readonly now?: () => number;
}

/** A running instance: its engine, and a request handler guarded by the shared limit. */
export interface Instance {
  readonly fg: Floodgate;
  readonly backend: RedisClusterBackend;
  /** Serves one quote request: `'quote'`, or `'429'` when the fleet is over its limit. */
  handle(): Promise<'quote' | '429'>;
  /** The checks decided without Redis (none while Redis is up). */
  readonly fallbacks: ClusterFallbackEvent[];
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
  await backend.ready();
  const fg = new Floodgate({ cluster: backend });
  fg.loadFlowRules([{ resource: 'GET /quote', threshold: QUOTES_PER_SECOND, cluster: { thresholdType: 'global' } }]);
  const fallbacks: ClusterFallbackEvent[] = [];
  fg.on('clusterFallback', (event) => fallbacks.push(event));
  return {
    fg,
    backend,
    fallbacks,
    async handle() {
      try {
        return await fg.run('GET /quote', () => 'quote' as const);
      } catch (error) {
        if (isBlockError(error)) return '429';
        throw error;
      }
    },
    async close() {
      await backend.close();
      client.disconnect();
    },
  };
}
