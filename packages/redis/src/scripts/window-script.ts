import { LUA_PRELUDE, RedisScript } from '../redis-script';

/**
 * A `reject` rule's sliding window, as the engine's local one: 2 buckets of `bucketMs`, kept
 * as a ring in one hash per scope (`s0`/`s1` = a bucket's number, `c0`/`c1` = its count), so a
 * key holds four fields and expires once idle for two windows. The expiry is set when a bucket
 * starts, which is often enough: a window only ever reads the last two buckets.
 *
 * One call decides a batch of checks in request order, exactly as one call per check would: a
 * check passes while the window's count + its tokens <= threshold, and what it takes counts for
 * the checks after it. Identical checks in a row come as one group with a count: they pass one by
 * one until one is refused, and every later one is refused alike (a refusal changes nothing).
 *
 * KEYS the scopes' hashes (all of one rule, so one hash slot). ARGV: now, threshold, bucketMs,
 * then per group: key (1-based index into KEYS), acquireCount, lease (0: take exactly
 * acquireCount; else take up to this many, at least acquireCount), count.
 *
 * Replies `{ msLeftInBucket, bucket, then per group: passed, value, room }`: the current
 * bucket's number (what {@link WINDOW_RELEASE_SCRIPT} needs to give tokens back); how many of the
 * group's checks passed (the first ones); value = the tokens the last one took when all passed,
 * else the retry-after of the refused ones (-1 when unknown); room = what is left in the window
 * after the group.
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
local out = { tostring(msLeft), tostring(cur) }
for r = 4, #ARGV, 4 do
  local k = tonumber(ARGV[r])
  local acquire = tonumber(ARGV[r + 1])
  local lease = tonumber(ARGV[r + 2])
  local count = tonumber(ARGV[r + 3])
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
  local passed, value = 0, 0
  while passed < count do
    local sum = current[k] + previous[k]
    local take = acquire
    if lease > 0 then take = math.max(acquire, math.min(lease, math.floor(threshold - sum))) end
    if sum + take > threshold then
      value = -1
      if previous[k] > 0 then value = (cur + 1) * bucketMs - now
      elseif current[k] > 0 then value = (cur + 2) * bucketMs - now end
      break
    end
    current[k] = current[k] + take
    taken[k] = true
    passed = passed + 1
    value = take
  end
  out[#out + 1] = tostring(passed)
  out[#out + 1] = fmt(value)
  out[#out + 1] = fmt(threshold - current[k] - previous[k])
end
for k in pairs(taken) do
  redis.call('HSET', KEYS[k], 's' .. idx, cur, 'c' .. idx, fmt(current[k]))
  if stale[k] then redis.call('PEXPIRE', KEYS[k], 4 * bucketMs) end
end
return out
`,
);

/**
 * Gives back tokens that calls took and did not use (a later check refused them, or they were
 * cancelled): best effort, and only to the bucket they were counted in, wherever it is in the
 * window (current or previous), never below zero; once that bucket has left the window (its slot
 * reused), nothing changes. The expiry is left alone.
 *
 * KEYS the scopes' hashes. ARGV per refund, in order: key (1-based index into KEYS), bucket (its
 * number), count. Replies the number of refunds applied.
 */
export const WINDOW_RELEASE_SCRIPT = new RedisScript(
  'windowRelease',
  `
local KEYS, ARGV, tonumber = KEYS, ARGV, tonumber
local refunded = 0
for r = 1, #ARGV, 3 do
  local key = KEYS[tonumber(ARGV[r])]
  local bucket = tonumber(ARGV[r + 1])
  local v = redis.call('HMGET', key, 's0', 'c0', 's1', 'c1')
  for slot = 0, 1 do
    if tonumber(v[2 * slot + 1]) == bucket then
      local left = (tonumber(v[2 * slot + 2]) or 0) - tonumber(ARGV[r + 2])
      if left < 0 then left = 0 end
      redis.call('HSET', key, 'c' .. slot, string.format('%.17g', left))
      refunded = refunded + 1
    end
  end
end
return refunded
`,
);
