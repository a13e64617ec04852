import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

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
 * check names one or more values (an array argument): all take or none does, and a value named
 * twice takes twice. Identical checks in a row come as one group with a count: they pass one by
 * one until one is refused, and every later one is refused alike (a refusal changes nothing).
 *
 * Each value is one string key of 16 bytes, the last refill time and the tokens left as two
 * little-endian doubles (Redis's `struct` library: exact, and cheaper than text), read for the
 * whole batch with one MGET and written with one `SET ... PX` (so Redis runs about one command
 * per value per batch), expiring once idle long enough for its bucket to be full again, and at
 * least 5 s.
 *
 * KEYS the values' keys, all of one rule (one hash slot). ARGV: now, burst, durationMs, then per
 * group: count, acquireCount, n, then n times: key (1-based index into KEYS), tokens (the value's
 * threshold).
 *
 * Replies, per group, `passed, retryAfterMs, index`: how many of its checks passed (the first
 * ones), and for the rest, the wait before a retry (-1: never) and the 0-based position of the
 * refusing value in the check.
 */
export const TOKEN_BUCKET_SCRIPT = new RedisScript(
  'tokenBucket',
  `${LUA_PRELUDE}
local burst = tonumber(ARGV[2])
local duration = tonumber(ARGV[3])
local SAFE_PRODUCT = 2 ^ 50
local MIN_TTL_MS = 5000
local tonumber, floor, ceil, pack, unpack16 = tonumber, math.floor, math.ceil, struct.pack, struct.unpack

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

-- Per value (by KEYS index): last refill time and tokens left (false: no bucket yet), the
-- longest TTL it needs, and whether a check changed it.
local time, left, ttl, dirty = {}, {}, {}, {}
for from = 1, #KEYS, 1000 do
  local to = math.min(from + 999, #KEYS)
  local values = redis.call('MGET', unpack(KEYS, from, to))
  for k = from, to do
    local v = values[k - from + 1]
    local t, l = false, false
    if v and #v == 16 then t, l = unpack16('<dd', v) end
    time[k], left[k], ttl[k] = t, l, MIN_TTL_MS
  end
end

-- Takes \`acquire\` from the bucket of value k (threshold \`tokens\`) whose state is \`last\`,
-- \`rest\`: the new state, or nil and the retry-after when the bucket is short.
local function take(k, tokens, acquire, last, rest)
  local max = tokens + burst
  if tokens <= 0 or acquire > max then return nil, '-1' end
  -- Idle for this long, the value's bucket is full again: its key can go.
  local keyTtl = ceil(duration * max / tokens) + duration
  if keyTtl > ttl[k] then ttl[k] = keyTtl end
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

-- Decides one check naming n values at ARGV[first ...] (key, tokens pairs): nil when it passes
-- (its changes kept), else the retry-after and the refusing position. All values or none.
local function check(acquire, n, first)
  if n == 1 then
    local k = tonumber(ARGV[first])
    local t, l = take(k, tonumber(ARGV[first + 1]), acquire, time[k], left[k])
    if t == nil then return l, 0 end
    time[k], left[k], dirty[k] = t, l, true
    return nil
  end
  local newTime, newLeft = {}, {}
  for j = 0, n - 1 do
    local k = tonumber(ARGV[first + 2 * j])
    local last, rest = newTime[k], newLeft[k]
    if last == nil then last, rest = time[k], left[k] end
    local t, l = take(k, tonumber(ARGV[first + 2 * j + 1]), acquire, last, rest)
    if t == nil then return l, j end
    newTime[k], newLeft[k] = t, l
  end
  for k, t in pairs(newTime) do
    time[k], left[k], dirty[k] = t, newLeft[k], true
  end
  return nil
end

local out = {}
local r = 4
while r <= #ARGV do
  local count = tonumber(ARGV[r])
  local acquire = tonumber(ARGV[r + 1])
  local n = tonumber(ARGV[r + 2])
  local passed, retry, index = 0, 0, -1
  while passed < count do
    local refusedRetry, refusedIndex = check(acquire, n, r + 3)
    if refusedRetry ~= nil then
      retry, index = refusedRetry, refusedIndex
      break
    end
    passed = passed + 1
  end
  out[#out + 1] = passed
  out[#out + 1] = retry
  out[#out + 1] = index
  r = r + 3 + 2 * n
end
for k in pairs(dirty) do
  -- A number argument is written by Redis itself as %.17g: exact for a TTL below 2^53.
  redis.call('SET', KEYS[k], pack('<dd', time[k], left[k]), 'PX', math.min(ttl[k], 9007199254740991))
end
return out
`,
);
