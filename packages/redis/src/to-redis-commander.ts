import { IoRedisCommander, type IoRedisLike } from './io-redis-commander';
import { NodeRedisCommander, type NodeRedisLike } from './node-redis-commander';
import type { RedisCommander } from './redis-commander';

/** A client {@link toRedisCommander} understands. */
export type RedisClientLike = RedisCommander | IoRedisLike | NodeRedisLike | object;

/**
 * The {@link RedisCommander} of an ioredis client (`new Redis()`, `new Redis.Cluster()`), a
 * node-redis client (`createClient()`, connected), or a commander given as is. For a Redis
 * Cluster use ioredis's `Redis.Cluster`: node-redis's cluster client (`createCluster()`) sends
 * commands with a different signature and is refused.
 * @throws TypeError when `client` is none of these, naming what to use instead.
 * @example
 * const commander = toRedisCommander(new Redis(process.env.REDIS_URL));
 */
export function toRedisCommander(client: RedisClientLike): RedisCommander {
  const c = client as Record<string, unknown>;
  if (typeof c.send === 'function' && typeof c.isReady === 'function' && typeof c.subscribe === 'function')
    return client as RedisCommander;
  if (typeof c.call === 'function' && typeof c.status === 'string') return new IoRedisCommander(client as IoRedisLike);
  if (typeof c.sendCommand === 'function' && 'isReady' in c) return new NodeRedisCommander(client as NodeRedisLike);
  if (typeof c.sendCommand === 'function' && 'masters' in c) {
    throw new TypeError(
      "client: node-redis's cluster client (createCluster()) is not supported; use ioredis's Redis.Cluster for a Redis Cluster, or implement RedisCommander",
    );
  }
  throw new TypeError('client must be an ioredis client, a node-redis client or a RedisCommander');
}
