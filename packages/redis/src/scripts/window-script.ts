import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * A `reject` rule's sliding window, as the engine's local one: 2 buckets of `bucketMs`, kept
 * as a ring in one hash per scope (`s0`/`s1` = a bucket's number, `c0`/`c1` = its count), so a
 * key holds four fields and expires once idle for two windows. The expiry is set when a bucket
 * starts, which is often enough: a window only ever reads the last two buckets.
 *
 * One call decides a batch of checks in request order, exactly as one call per check would: a
 * check passes while the window's count + its tokens <= threshold, and what it takes counts for
 * the checks after it.
 *
 * KEYS the scopes' hashes (all of one rule, so one hash slot). ARGV: now, threshold, bucketMs,
 * then per check: key (1-based index into KEYS), acquireCount, lease (0: take exactly
 * acquireCount; else take up to this many, at least acquireCount).
 *
 * Replies `{ msLeftInBucket, then per check: status, value, room }`: status `1` (passed; value =
 * the tokens taken) or `0` (refused; value = retryAfterMs, -1 when unknown), and room = what is
 * left in the window after the check.
 */
export const WINDOW_SCRIPT = new RedisScript(
  'window',
  `${LUA_PRELUDE}
local threshold = tonumber(ARGV[2])
local bucketMs = tonumber(ARGV[3])
local cur = math.floor(now / bucketMs)
local idx = cur % 2
local msLeft = (cur + 1) * bucketMs - now
local current, previous, stale, taken = {}, {}, {}, {}
local out = { tostring(msLeft) }
for r = 4, #ARGV, 3 do
  local k = tonumber(ARGV[r])
  local acquire = tonumber(ARGV[r + 1])
  local lease = tonumber(ARGV[r + 2])
  if current[k] == nil then
    local v = redis.call('HMGET', KEYS[k], 's0', 'c0', 's1', 'c1')
    local s = { tonumber(v[1]), tonumber(v[3]) }
    local c = { tonumber(v[2]) or 0, tonumber(v[4]) or 0 }
    current[k] = 0
    previous[k] = 0
    if s[idx + 1] == cur then current[k] = c[idx + 1] end
    if s[2 - idx] == cur - 1 then previous[k] = c[2 - idx] end
    stale[k] = s[idx + 1] ~= cur
  end
  local sum = current[k] + previous[k]
  local take = acquire
  if lease > 0 then take = math.max(acquire, math.min(lease, math.floor(threshold - sum))) end
  if sum + take > threshold then
    local retry = -1
    if previous[k] > 0 then retry = (cur + 1) * bucketMs - now
    elseif current[k] > 0 then retry = (cur + 2) * bucketMs - now end
    out[#out + 1] = '0'
    out[#out + 1] = tostring(retry)
    out[#out + 1] = tostring(threshold - sum)
  else
    current[k] = current[k] + take
    taken[k] = true
    out[#out + 1] = '1'
    out[#out + 1] = tostring(take)
    out[#out + 1] = tostring(threshold - sum - take)
  end
end
for k in pairs(taken) do
  redis.call('HSET', KEYS[k], 's' .. idx, cur, 'c' .. idx, tostring(current[k]))
  if stale[k] then redis.call('PEXPIRE', KEYS[k], 4 * bucketMs) end
end
return out
`,
);
