import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * A `reject` rule's sliding window, as the engine's local one: `n` buckets of `bucketMs` kept
 * as a ring in one hash (`s<i>` = the bucket's number, `c<i>` = its count), so the key holds
 * a fixed number of fields and expires once idle for two windows.
 *
 * KEYS[1] the rule's hash. ARGV: now, threshold, acquireCount, lease (0: take exactly
 * acquireCount; else take up to this many, at least acquireCount), bucketMs, n.
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
local n = tonumber(ARGV[6])
local cur = math.floor(now / bucketMs)
local fields = {}
for i = 0, n - 1 do
  fields[2 * i + 1] = 's' .. i
  fields[2 * i + 2] = 'c' .. i
end
local v = redis.call('HMGET', KEYS[1], unpack(fields))
local sum = 0
local oldest = nil
for i = 0, n - 1 do
  local s = tonumber(v[2 * i + 1])
  local c = tonumber(v[2 * i + 2]) or 0
  if s ~= nil and s > cur - n and s <= cur and c > 0 then
    sum = sum + c
    if oldest == nil or s < oldest then oldest = s end
  end
end
local msLeft = (cur + 1) * bucketMs - now
local take = acquire
if lease > 0 then take = math.max(acquire, math.min(lease, math.floor(threshold - sum))) end
if sum + take > threshold then
  local retry = -1
  if oldest ~= nil then retry = (oldest + n) * bucketMs - now end
  return { '0', fmt(retry), fmt(msLeft), fmt(threshold - sum) }
end
local idx = cur % n
local count = 0
if tonumber(v[2 * idx + 1]) == cur then count = tonumber(v[2 * idx + 2]) or 0 end
redis.call('HSET', KEYS[1], 's' .. idx, cur, 'c' .. idx, fmt(count + take))
redis.call('PEXPIRE', KEYS[1], 2 * n * bucketMs)
return { '1', fmt(take), fmt(msLeft), fmt(threshold - sum - take) }
`,
);
