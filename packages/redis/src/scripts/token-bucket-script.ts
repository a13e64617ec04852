import { LUA_PRELUDE, RedisScript } from '../redis-script';

/**
 * The token buckets of a QPS `reject` hotspot rule, one per parameter value (Sentinel's
 * ParamFlowChecker, as the local checker): a value holds `tokens + burst` tokens; they are
 * refilled (`⌊elapsed × tokens / durationMs⌋`, up to the bucket's size) only once more than a
 * full `durationMs` has passed since the last refill, and the refill time moves to now.
 *
 * The refill is the local one's (`refillTokens` in `@floodgate/core`), operation for operation,
 * so both give the same tokens for the same times: whole durations add `tokens` each; the
 * remainder's share is floored in doubles while its product is below 2^50, and above, for
 * integer times, by an exact multiply-and-divide on doubles (shift and subtract, every value
 * below 2^54), where the local one uses BigInt. Exact for durations below 2^52 ms.
 *
 * One call decides a batch of checks in request order, exactly as one call per check would. A
 * check names one value, or several (an array argument): all take or none does, and a value
 * named twice takes twice. A refusal changes nothing.
 *
 * Storage, built for many values per batch (what costs Redis is commands and parsed arguments,
 * per value): each value is one string key of 24 bytes, three little-endian doubles (Redis's
 * `struct` library: exact, and cheaper than text): the last refill time, the tokens left, and
 * when the key's TTL ends on the script's clock. The batch's keys are read with one MGET. A key
 * written with room left in its TTL is rewritten in place (`SETRANGE`, which keeps the TTL);
 * otherwise it is written with `SET ... PX` for twice the time its bucket needs to be full again
 * when idle (at least 5 s). So a value's key lives between that time and twice it after its
 * last use: never less (an expired key is a full bucket, exactly what the refill would give),
 * and a flood of distinct values costs Redis memory only while it lasts. Keys of the 16-byte
 * layout of earlier versions are read, and rewritten with a TTL.
 *
 * KEYS one key per value named, in request order (a value named by two checks is named twice;
 * all keys of one rule: one hash slot). ARGV: now, burst, durationMs, then segments in request
 * order: `m, acquireCount, tokens` (m >= 1): the next m keys are m checks of one value each,
 * each taking acquireCount from a bucket of threshold `tokens`; or `-n, acquireCount, tokens_1
 * ... tokens_n`: the next n keys are one check of n values.
 *
 * Replies `{ now, then per check: 1 (passed) or 0 (refused), then per refused check:
 * retryAfterMs (-1: never), index }`: the index is the 0-based position of the refusing value
 * in its check. `now` (the script's time) is what {@link TOKEN_BUCKET_RELEASE_SCRIPT} needs to
 * give the tokens back.
 */
export const TOKEN_BUCKET_SCRIPT = new RedisScript(
  'tokenBucket',
  `${LUA_PRELUDE}
local KEYS, ARGV = KEYS, ARGV
local burst = tonumber(ARGV[2])
local duration = tonumber(ARGV[3])
local SAFE_PRODUCT = 2 ^ 50
local MIN_TTL_MS = 5000
local MAX_TTL_MS = 4503599627370496
local tonumber, floor, ceil, pack, unpack24 = tonumber, math.floor, math.ceil, struct.pack, struct.unpack

-- floor(a * b / d) for integers 0 <= a < d < 2^52 and 0 <= b < 2^53, exactly: b's bits from the
-- top, keeping a * (b's bits so far) = q * d + r with 0 <= r < d.
local function mulDivFloor(a, b, d)
  local bits = {}
  while b > 0 do
    local bit = b % 2
    bits[#bits + 1] = bit
    b = (b - bit) / 2
  end
  local q, r = 0, 0
  for i = #bits, 1, -1 do
    q = q * 2
    r = r * 2
    if r >= d then q = q + 1; r = r - d end
    if bits[i] == 1 then
      r = r + a
      if r >= d then q = q + 1; r = r - d end
    end
  end
  return q
end

local function refill(rest, elapsed, tokens, max)
  local periods = floor(elapsed / duration)
  local remainder = elapsed - periods * duration
  if remainder < 0 then
    periods = periods - 1
    remainder = remainder + duration
  end
  local added = periods * tokens
  if added < max then
    local product = remainder * tokens
    if product < SAFE_PRODUCT or remainder % 1 ~= 0 or duration % 1 ~= 0 then
      added = added + floor(product / duration)
    else
      added = added + mulDivFloor(remainder, tokens, duration)
    end
  end
  local total = rest + added
  if total < max then return total end
  return max
end

-- Per key: last refill time and tokens left (false: no bucket), when its TTL ends (0: unknown),
-- the TTL a write needs (0: not written).
local time, left, expires, ttl = {}, {}, {}, {}
do
  local distinct = {}
  for i = 1, #KEYS do
    local k = KEYS[i]
    if ttl[k] == nil then
      ttl[k] = 0
      distinct[#distinct + 1] = k
    end
  end
  for from = 1, #distinct, 1000 do
    local to = math.min(from + 999, #distinct)
    local values = redis.call('MGET', unpack(distinct, from, to))
    for j = from, to do
      local k, v = distinct[j], values[j - from + 1]
      local t, l, x = false, false, 0
      if v then
        if #v == 24 then t, l, x = unpack24('<ddd', v)
        elseif #v == 16 then t, l = unpack24('<dd', v) end
      end
      time[k], left[k], expires[k] = t, l, x
    end
  end
end

-- Takes \`acquire\` from the bucket (threshold \`tokens\`, size \`max\`) whose state is \`last\`,
-- \`rest\`: the new state, or nil and the retry-after when the bucket is short.
local function take(tokens, max, acquire, last, rest)
  if last == false then return now, max - acquire end
  local elapsed = now - last
  local available = rest
  if elapsed > duration then
    available = refill(rest, elapsed, tokens, max)
    last = now
  end
  if available < acquire then
    local enough = duration * (acquire - rest) / tokens
    if enough > duration then return nil, fmt(enough - elapsed) end
    return nil, fmt(duration + 1 - elapsed)
  end
  return last, available - acquire
end

-- Idle for this long, a bucket of threshold \`tokens\` and size \`max\` is full again.
local function idleTtl(tokens, max)
  local t = ceil(duration * max / tokens) + duration
  if t < MIN_TTL_MS then return MIN_TTL_MS end
  return t
end

local out = { fmt(now) }
local refused = {}
local r, key = 4, 1
while r <= #ARGV do
  local m = tonumber(ARGV[r])
  local acquire = tonumber(ARGV[r + 1])
  if m > 0 then
    -- m checks of one value each, all with this threshold.
    local tokens = tonumber(ARGV[r + 2])
    local max = tokens + burst
    local usable = tokens > 0 and acquire <= max
    local keyTtl = usable and idleTtl(tokens, max) or 0
    for i = key, key + m - 1 do
      local k = KEYS[i]
      local t, l
      if usable then t, l = take(tokens, max, acquire, time[k], left[k]) else l = '-1' end
      if t ~= nil then
        time[k], left[k] = t, l
        if keyTtl > ttl[k] then ttl[k] = keyTtl end
        out[#out + 1] = 1
      else
        out[#out + 1] = 0
        refused[#refused + 1] = l
        refused[#refused + 1] = 0
      end
    end
    key = key + m
    r = r + 3
  else
    -- One check of n values: all or none.
    local n = -m
    local newTime, newLeft, newTtl = {}, {}, {}
    local refusedRetry, refusedIndex
    for j = 0, n - 1 do
      local k = KEYS[key + j]
      local tokens = tonumber(ARGV[r + 2 + j])
      local max = tokens + burst
      if tokens <= 0 or acquire > max then
        refusedRetry, refusedIndex = '-1', j
        break
      end
      local last, rest = newTime[k], newLeft[k]
      if last == nil then last, rest = time[k], left[k] end
      local t, l = take(tokens, max, acquire, last, rest)
      if t == nil then
        refusedRetry, refusedIndex = l, j
        break
      end
      newTime[k], newLeft[k] = t, l
      local keyTtl = idleTtl(tokens, max)
      if keyTtl > (newTtl[k] or 0) then newTtl[k] = keyTtl end
    end
    if refusedRetry == nil then
      for k, t in pairs(newTime) do
        time[k], left[k] = t, newLeft[k]
        if newTtl[k] > ttl[k] then ttl[k] = newTtl[k] end
      end
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
      refused[#refused + 1] = refusedRetry
      refused[#refused + 1] = refusedIndex
    end
    key = key + n
    r = r + 2 + n
  end
end
for k, keyTtl in pairs(ttl) do
  if keyTtl > 0 then
    if expires[k] - now >= keyTtl then
      redis.call('SETRANGE', k, 0, pack('<dd', time[k], left[k]))
    else
      -- A number argument is written by Redis itself as %.17g: exact below 2^53.
      local px = 2 * keyTtl
      if px > MAX_TTL_MS then px = MAX_TTL_MS end
      redis.call('SET', k, pack('<ddd', time[k], left[k], now + px), 'PX', px)
    end
  end
end
for i = 1, #refused do out[#out + 1] = refused[i] end
return out
`,
);

/**
 * Gives back tokens that calls took and did not use (a later check refused them, or they were
 * cancelled): best effort, and only to a bucket not refilled since the take (its refill time is
 * still at most the take's `now`), so the refund is exactly the tokens that take removed and a
 * bucket never holds more than its size; a key gone or rewritten since is left alone. The TTL
 * is kept (`SETRANGE`).
 *
 * KEYS the values' keys. ARGV per key, in order: takenAt (the take's script time), count.
 * Replies the number of keys refunded.
 */
export const TOKEN_BUCKET_RELEASE_SCRIPT = new RedisScript(
  'tokenBucketRelease',
  `
local KEYS, ARGV, tonumber = KEYS, ARGV, tonumber
local refunded = 0
for i = 1, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v and (#v == 24 or #v == 16) then
    local t, l = struct.unpack('<dd', v)
    if t <= tonumber(ARGV[2 * i - 1]) then
      redis.call('SETRANGE', KEYS[i], 8, struct.pack('<d', l + tonumber(ARGV[2 * i])))
      refunded = refunded + 1
    end
  end
end
return refunded
`,
);
