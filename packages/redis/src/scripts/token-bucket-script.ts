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
 * twice takes twice.
 *
 * KEYS the values' hashes (`t` = last refill time, `r` = tokens left), all of one rule (one hash
 * slot). ARGV: now, burst, durationMs, then per check: acquireCount, n, then n times: key
 * (1-based index into KEYS), tokens (the value's threshold), ttlMs.
 *
 * Replies, per check, `status, retryAfterMs, index`: `1, 0, -1` (passed) or `0, retryAfterMs
 * (-1: never), index` (refused by its value at 0-based `index`).
 */
export const TOKEN_BUCKET_SCRIPT = new RedisScript(
  'tokenBucket',
  `${LUA_PRELUDE}
local burst = tonumber(ARGV[2])
local duration = tonumber(ARGV[3])
local SAFE_PRODUCT = 2 ^ 50

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
  local periods = math.floor(elapsed / duration)
  local remainder = elapsed - periods * duration
  if remainder < 0 then
    periods = periods - 1
    remainder = remainder + duration
  end
  local added = periods * tokens
  if added < max then
    local product = remainder * tokens
    if product < SAFE_PRODUCT or remainder % 1 ~= 0 or duration % 1 ~= 0 then
      added = added + math.floor(product / duration)
    else
      added = added + mulDivFloor(remainder, tokens, duration)
    end
  end
  local total = rest + added
  if total < max then return total end
  return max
end

-- Per value (by KEYS index): last refill time and tokens left (false: no bucket yet), the
-- longest TTL asked for it (number and argument), and whether a check changed it.
local time, left, ttl, ttlArg, dirty = {}, {}, {}, {}, {}
local out = {}
local r = 4
while r <= #ARGV do
  local acquire = tonumber(ARGV[r])
  local n = tonumber(ARGV[r + 1])
  local first = r + 2
  r = first + 3 * n
  -- This check's changes, kept only if every value it names passes.
  local newTime, newLeft = {}, {}
  local refused = nil
  for j = 0, n - 1 do
    local k = tonumber(ARGV[first + 3 * j])
    local tokens = tonumber(ARGV[first + 3 * j + 1])
    local max = tokens + burst
    if tokens <= 0 or acquire > max then
      refused = { '-1', j }
      break
    end
    if time[k] == nil then
      local v = redis.call('HMGET', KEYS[k], 't', 'r')
      local t, l = tonumber(v[1]), tonumber(v[2])
      if t == nil or l == nil then t, l = false, false end
      time[k], left[k], ttl[k] = t, l, -1
    end
    local last, rest = newTime[k], newLeft[k]
    if last == nil then last, rest = time[k], left[k] end
    if last == false then
      newTime[k] = now
      newLeft[k] = max - acquire
    else
      local elapsed = now - last
      local available = rest
      if elapsed > duration then
        available = refill(rest, elapsed, tokens, max)
        last = now
      end
      if available < acquire then
        local enough = duration * (acquire - rest) / tokens
        local retry
        if enough > duration then retry = enough - elapsed else retry = duration + 1 - elapsed end
        refused = { fmt(retry), j }
        break
      end
      newTime[k] = last
      newLeft[k] = available - acquire
    end
    local keyTtl = tonumber(ARGV[first + 3 * j + 2])
    if keyTtl > ttl[k] then
      ttl[k] = keyTtl
      ttlArg[k] = ARGV[first + 3 * j + 2]
    end
  end
  if refused == nil then
    for k, t in pairs(newTime) do
      time[k] = t
      left[k] = newLeft[k]
      dirty[k] = true
    end
    out[#out + 1] = '1'
    out[#out + 1] = '0'
    out[#out + 1] = '-1'
  else
    out[#out + 1] = '0'
    out[#out + 1] = refused[1]
    out[#out + 1] = tostring(refused[2])
  end
end
for k in pairs(dirty) do
  redis.call('HSET', KEYS[k], 't', fmt(time[k]), 'r', fmt(left[k]))
  redis.call('PEXPIRE', KEYS[k], ttlArg[k])
end
return out
`,
);
