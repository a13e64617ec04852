import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * A QPS hotspot rule's token bucket for one parameter value (Sentinel's ParamFlowChecker): a
 * value holds `tokens + burst` tokens; they are refilled (`elapsed * tokens / durationMs`,
 * floored) only once a full `durationMs` has passed since the last refill.
 *
 * KEYS[1] the value's hash (`t` = last refill time, `r` = tokens left). ARGV: now, tokens
 * (the value's threshold), burst, durationMs, acquireCount, ttlMs.
 *
 * Replies `{ '1', '0' }` (pass) or `{ '0', retryAfterMs }` (blocked; -1 when it never passes).
 */
export const TOKEN_BUCKET_SCRIPT = new RedisScript(
  'tokenBucket',
  `${LUA_PRELUDE}
local tokens = tonumber(ARGV[2])
local max = tokens + tonumber(ARGV[3])
local duration = tonumber(ARGV[4])
local acquire = tonumber(ARGV[5])
local ttl = ARGV[6]
if tokens <= 0 or acquire > max then return { '0', '-1' } end
local v = redis.call('HMGET', KEYS[1], 't', 'r')
local last = tonumber(v[1])
local rest = tonumber(v[2])
if last == nil or rest == nil then
  redis.call('HSET', KEYS[1], 't', fmt(now), 'r', fmt(max - acquire))
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { '1', '0' }
end
local elapsed = now - last
if elapsed > duration then
  local add = math.floor(elapsed * tokens / duration)
  local left
  if add + rest > max then left = max - acquire else left = rest + add - acquire end
  if left < 0 then return { '0', fmt(duration) } end
  redis.call('HSET', KEYS[1], 't', fmt(now), 'r', fmt(left))
  redis.call('PEXPIRE', KEYS[1], ttl)
  return { '1', '0' }
end
if rest - acquire >= 0 then
  redis.call('HSET', KEYS[1], 'r', fmt(rest - acquire))
  return { '1', '0' }
end
return { '0', fmt(duration - elapsed) }
`,
);
