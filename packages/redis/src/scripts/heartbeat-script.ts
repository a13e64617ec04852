import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * Registers an instance as live and counts the live ones: a sorted set scored by each
 * instance's last heartbeat, pruned of those silent for longer than the TTL.
 *
 * KEYS[1] the set. ARGV: now, instance id, ttlMs. Replies the number of live instances.
 */
export const HEARTBEAT_SCRIPT = new RedisScript(
  'heartbeat',
  `${LUA_PRELUDE}
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], fmt(now), ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. fmt(now - ttl))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * ttl))
return redis.call('ZCARD', KEYS[1])
`,
);
