import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * The token buckets of a QPS `reject` hotspot rule, one per parameter value (Sentinel's
 * ParamFlowChecker, as the local checker): a value holds `tokens + burst` tokens; they are
 * refilled (`⌊elapsed × tokens / durationMs⌋`, up to the bucket's size) only once more than a
 * full `durationMs` has passed since the last refill, and the refill time moves to now. An
 * array argument gives several keys: all take or none does, and a key given twice takes twice.
 *
 * KEYS the values' hashes (`t` = last refill time, `r` = tokens left). ARGV: now, burst,
 * durationMs, acquireCount, then per key: tokens (the value's threshold), ttlMs.
 *
 * Replies `{ '1', '0', '-1' }` (pass) or `{ '0', retryAfterMs (-1: never), index }` (blocked by
 * the key at 0-based `index`).
 */
export const TOKEN_BUCKET_SCRIPT = new RedisScript(
  'tokenBucket',
  `${LUA_PRELUDE}
local burst = tonumber(ARGV[2])
local duration = tonumber(ARGV[3])
local acquire = tonumber(ARGV[4])
local time = {}
local left = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local tokens = tonumber(ARGV[3 + 2 * i])
  local max = tokens + burst
  if tokens <= 0 or acquire > max then return { '0', '-1', tostring(i - 1) } end
  local last = time[key]
  local rest = left[key]
  if last == nil then
    local v = redis.call('HMGET', key, 't', 'r')
    last = tonumber(v[1])
    rest = tonumber(v[2])
  end
  if last == nil or rest == nil then
    time[key] = now
    left[key] = max - acquire
  else
    local elapsed = now - last
    local available = rest
    if elapsed > duration then
      available = math.min(rest + math.floor(elapsed * tokens / duration), max)
      last = now
    end
    if available < acquire then
      local enough = duration * (acquire - rest) / tokens
      local retry
      if enough > duration then retry = enough - elapsed else retry = duration + 1 - elapsed end
      return { '0', fmt(retry), tostring(i - 1) }
    end
    time[key] = last
    left[key] = available - acquire
  end
end
for i = 1, #KEYS do
  local key = KEYS[i]
  redis.call('HSET', key, 't', fmt(time[key]), 'r', fmt(left[key]))
  redis.call('PEXPIRE', key, ARGV[4 + 2 * i])
end
return { '1', '0', '-1' }
`,
);
