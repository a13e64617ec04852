import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * A `throttle` rule's shared pacing (Sentinel's ThrottlingController, with the latest passed
 * time kept in Redis): a call passes at once when the latest pass is at least `cost` ago, else
 * it takes the next free slot if that is at most `maxQueueingTimeMs` away.
 *
 * KEYS[1] the latest passed time. ARGV: now, costMs, maxQueueingTimeMs, ttlMs.
 *
 * Replies `{ '1', '0' }` (pass now), `{ '2', waitMs }` (slot reserved, wait) or
 * `{ '0', retryAfterMs }` (blocked).
 */
export const PACE_SCRIPT = new RedisScript(
  'pace',
  `${LUA_PRELUDE}
local cost = tonumber(ARGV[2])
local maxWait = tonumber(ARGV[3])
local ttl = ARGV[4]
local latest = tonumber(redis.call('GET', KEYS[1]))
if latest == nil or latest + cost <= now then
  redis.call('SET', KEYS[1], fmt(now), 'PX', ttl)
  return { '1', '0' }
end
local wait = latest + cost - now
if wait > maxWait then return { '0', fmt(wait - maxWait) } end
redis.call('SET', KEYS[1], fmt(latest + cost), 'PX', ttl)
return { '2', fmt(wait) }
`,
);
