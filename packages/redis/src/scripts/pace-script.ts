import { LUA_PRELUDE, RedisScript } from '../redis-script';

/**
 * Shared pacing (Sentinel's ThrottlingController, with the latest passed time kept in Redis),
 * for a `throttle` flow rule (one key) or the values of a `throttle` hotspot rule (one key per
 * value; an array argument names several). For each key, a check passes at once when the latest
 * pass is at least `cost` ago, else it takes the next free slot if that is at most
 * `maxQueueingTimeMs` away. All keys of a check or none: when one key refuses, the check changes
 * nothing. A key named twice is paced twice, as the local checker does.
 *
 * One call decides a batch of checks in request order, exactly as one call per check would.
 *
 * KEYS the latest passed times, all of one rule (one hash slot). ARGV: now, maxQueueingTimeMs,
 * then per check: n, then n times: key (1-based index into KEYS), costMs, ttlMs.
 *
 * Replies, per check, `status, ms, index`: `1, 0, -1` (pass now), `2, waitMs, -1` (slots
 * reserved, wait for the longest) or `0, retryAfterMs, index` (refused by its key at 0-based
 * `index`).
 */
export const PACE_SCRIPT = new RedisScript(
  'pace',
  `${LUA_PRELUDE}
local maxWait = tonumber(ARGV[2])
-- Per key (by KEYS index): the latest passed time (false: none), its TTL (number and argument).
local latest, ttl, ttlArg, dirty = {}, {}, {}, {}
local out = {}
local r = 3
while r <= #ARGV do
  local n = tonumber(ARGV[r])
  local first = r + 1
  r = first + 3 * n
  local mine = {}
  local wait = 0
  local refused = nil
  for j = 0, n - 1 do
    local k = tonumber(ARGV[first + 3 * j])
    local cost = tonumber(ARGV[first + 3 * j + 1])
    if latest[k] == nil then
      latest[k] = tonumber(redis.call('GET', KEYS[k])) or false
      ttl[k] = -1
    end
    local last = mine[k]
    if last == nil then last = latest[k] end
    if last == false or last + cost <= now then
      mine[k] = now
    else
      local w = last + cost - now
      -- not (w <= maxWait): a wait that is not a number refuses (NaN > maxWait is false).
      if not (w <= maxWait) then
        refused = { fmt(w - maxWait), j }
        break
      end
      mine[k] = last + cost
      if w > wait then wait = w end
    end
    local keyTtl = tonumber(ARGV[first + 3 * j + 2])
    if keyTtl > ttl[k] then
      ttl[k] = keyTtl
      ttlArg[k] = ARGV[first + 3 * j + 2]
    end
  end
  if refused ~= nil then
    out[#out + 1] = '0'
    out[#out + 1] = refused[1]
    out[#out + 1] = tostring(refused[2])
  else
    for k, t in pairs(mine) do
      latest[k] = t
      dirty[k] = true
    end
    if wait > 0 then
      out[#out + 1] = '2'
      out[#out + 1] = fmt(wait)
    else
      out[#out + 1] = '1'
      out[#out + 1] = '0'
    end
    out[#out + 1] = '-1'
  end
end
for k in pairs(dirty) do
  redis.call('SET', KEYS[k], fmt(latest[k]), 'PX', ttlArg[k])
end
return out
`,
);
