import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * A `reject` rule's sliding window, as the engine's local one: 2 buckets of `bucketMs`, kept
 * as a ring in one hash (`s0`/`s1` = a bucket's number, `c0`/`c1` = its count), so the key holds
 * four fields and expires once idle for two windows. The expiry is set when a bucket starts,
 * which is often enough: a window only ever reads the last two buckets.
 *
 * KEYS[1] the rule's hash. ARGV: now, threshold, acquireCount, lease (0: take exactly
 * acquireCount; else take up to this many, at least acquireCount), bucketMs.
 *
 * Replies `{ '1', taken, msLeftInBucket, left }` or `{ '0', retryAfterMs (-1: unknown),
 * msLeftInBucket, left }`, where `left` is the room left in the window.
 */
export const WINDOW_SCRIPT = new RedisScript(
  'window',
  `${LUA_PRELUDE}
local threshold = tonumber(ARGV[2])
local acquire = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local bucketMs = tonumber(ARGV[5])
local cur = math.floor(now / bucketMs)
local v = redis.call('HMGET', KEYS[1], 's0', 'c0', 's1', 'c1')
local s0, s1 = tonumber(v[1]), tonumber(v[3])
local c0, c1 = 0, 0
if s0 ~= nil and s0 > cur - 2 and s0 <= cur then c0 = tonumber(v[2]) or 0 end
if s1 ~= nil and s1 > cur - 2 and s1 <= cur then c1 = tonumber(v[4]) or 0 end
local sum = c0 + c1
local msLeft = (cur + 1) * bucketMs - now
local take = acquire
if lease > 0 then take = math.max(acquire, math.min(lease, math.floor(threshold - sum))) end
if sum + take > threshold then
  local oldest = nil
  if c0 > 0 then oldest = s0 end
  if c1 > 0 and (oldest == nil or s1 < oldest) then oldest = s1 end
  local retry = -1
  if oldest ~= nil then retry = (oldest + 2) * bucketMs - now end
  return { '0', tostring(retry), tostring(msLeft), tostring(threshold - sum) }
end
local idx = cur % 2
local s, count = s0, c0
if idx == 1 then s, count = s1, c1 end
if s ~= cur then count = 0 end
redis.call('HSET', KEYS[1], 's' .. idx, cur, 'c' .. idx, tostring(count + take))
if s ~= cur then redis.call('PEXPIRE', KEYS[1], 4 * bucketMs) end
return { '1', tostring(take), tostring(msLeft), tostring(threshold - sum - take) }
`,
);
