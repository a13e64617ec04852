import { RedisScript } from '../redis-script';
import { LUA_PRELUDE } from './lua-prelude';

/**
 * Shared pacing (Sentinel's ThrottlingController, with the latest passed time kept in Redis),
 * for a `throttle` flow rule (one key) or the values of a `throttle` hotspot rule (one key per
 * value; an array argument gives several). For each key, a call passes at once when the latest
 * pass is at least `cost` ago, else it takes the next free slot if that is at most
 * `maxQueueingTimeMs` away. All keys or none: when one key refuses, no key is changed. A key
 * given twice is paced twice, as the local checker does.
 *
 * KEYS the latest passed times. ARGV: now, maxQueueingTimeMs, then per key: costMs, ttlMs.
 *
 * Replies `{ '1', '0', '-1' }` (pass now), `{ '2', waitMs, '-1' }` (slots reserved, wait for
 * the longest) or `{ '0', retryAfterMs, index }` (blocked by the key at 0-based `index`).
 */
export const PACE_SCRIPT = new RedisScript(
  'pace',
  `${LUA_PRELUDE}
local maxWait = tonumber(ARGV[2])
local latest = {}
local wait = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  local cost = tonumber(ARGV[1 + 2 * i])
  local last = latest[key]
  if last == nil then last = tonumber(redis.call('GET', key)) end
  if last == nil or last + cost <= now then
    latest[key] = now
  else
    local w = last + cost - now
    if w > maxWait then return { '0', fmt(w - maxWait), tostring(i - 1) } end
    latest[key] = last + cost
    if w > wait then wait = w end
  end
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], fmt(latest[KEYS[i]]), 'PX', ARGV[2 + 2 * i])
end
if wait > 0 then return { '2', fmt(wait), '-1' } end
return { '1', '0', '-1' }
`,
);
