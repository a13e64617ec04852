import { LUA_PRELUDE, RedisScript } from '../redis-script';

/**
 * One circuit breaker shared by every instance (a rule with `cluster: true`): Sentinel's state
 * machine as core's local breaker runs it, with its window and state in one hash, so every
 * instance's completions count together and every instance sees one state.
 *
 * - **closed**: each completion is counted in the window (`statIntervalMs` in `bucketCount`
 *   tumbling buckets); once it holds `minRequestAmount` calls, the slow ratio, error ratio or
 *   error count greater than the threshold (a ratio threshold of 1 trips at 1) opens it, at the
 *   completion that crossed it.
 * - **open** until `retryTimeoutMs` after opening; the first acquire after that makes it
 *   **halfOpen** and takes the first probe.
 * - **halfOpen**: `halfOpenProbes` probes, each a lease held by one caller (`p<i>`: its deadline,
 *   `retryTimeoutMs` after it was taken, on the script's clock; `h<i>`: its holder's token), so
 *   every other call is refused. All settled as successes close the breaker and empty its
 *   window; one failure, or a lease reaching its deadline unsettled (a caller that crashed),
 *   reopens it (at that deadline) for another `retryTimeoutMs`; a probe given back unused is
 *   free for another call. Leases expire lazily, checked by every
 *   call of this script, so their deadline is on the same clock as everything else (Redis's
 *   `TIME`, or the backend's `now`), exactly as the local breaker checks its probes.
 *
 * Each transition increments `ver` and is published on the channel (`ver|state|retryAfterMs|
 * value|key`, state 0 closed, 1 open, 2 halfOpen), so instances learn it at once, as is a probe
 * given back (it increments `ver` too: no time to wait for a probe now). `per` is the `ver` of
 * the latest transition: it names the half-open period a lease belongs to, and a settle of an
 * older period, or of a lease already expired, changes nothing. The hash
 * expires after `ttlMs` without a call (the breaker is closed again then).
 *
 * KEYS[1] the breaker's hash. ARGV: now, strategy (`s` slow ratio, `r` error ratio, `c` error
 * count), threshold, minRequestAmount, statIntervalMs, bucketCount, retryTimeoutMs,
 * halfOpenProbes, channel, ttlMs, then operations in the order they happened:
 * `c<outcomes>` completions, one character each (`o` ok, `s` slow, `e` error, `x` both);
 * `a<token>` a call asking to pass (a probe lease for `token` when due);
 * `s<o><per>:<slot>:<token>` a probe's outcome (`1` success, `0` failure, `2` unused: its call
 * did not run, the probe is free again); `r` nothing (a read).
 *
 * Replies `{ ver, state, retryAfterMs, value, then per 'a' operation: kind, detail }`: the state
 * after every operation, `retryAfterMs` while open (until probing) or half-open with every probe
 * held (until the oldest lease's deadline), else 0; `value` the last transition's ('' when none);
 * kind `0` pass, `1` probe (detail `per:slot`, the lease), `-1` refused (detail: retryAfterMs).
 */
export const BREAKER_SCRIPT = new RedisScript(
  'breaker',
  `${LUA_PRELUDE}
local KEYS, ARGV, tonumber, floor, byte, sub = KEYS, ARGV, tonumber, math.floor, string.byte, string.sub
local key = KEYS[1]
local strategy = ARGV[2]
local threshold = tonumber(ARGV[3])
local minRequest = tonumber(ARGV[4])
local interval = tonumber(ARGV[5])
local buckets = tonumber(ARGV[6])
local retry = tonumber(ARGV[7])
local probes = tonumber(ARGV[8])
local channel = ARGV[9]
local CLOSED, OPEN, HALF = 0, 1, 2
local SLOW, ERROR, BOTH = byte('s'), byte('e'), byte('x')

local f = {}
do
  local raw = redis.call('HGETALL', key)
  for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
end
local st = tonumber(f.st) or CLOSED
local ver = tonumber(f.ver) or 0
local per = tonumber(f.per) or ver
local at = tonumber(f.at) or 0
local val = f.val or ''
local adm = tonumber(f.adm) or 0
local ok = tonumber(f.ok) or 0
local deadline, holder = {}, {}
for i = 1, probes do
  deadline[i] = tonumber(f['p' .. i])
  holder[i] = f['h' .. i]
end
local bucketMs = interval / buckets
local cur = floor(now / bucketMs)
local bn, bt, bs, be = {}, {}, {}, {}
for i = 0, buckets - 1 do
  bn[i] = tonumber(f['n' .. i]) or -1
  bt[i] = tonumber(f['t' .. i]) or 0
  bs[i] = tonumber(f['s' .. i]) or 0
  be[i] = tonumber(f['e' .. i]) or 0
end
local changed, bucketDirty, cleared, messages, freed = false, {}, {}, {}, false

-- Moves to \`to\`, to be announced (see \`announce\`).
local function transition(to, value)
  st, ver, val, changed = to, ver + 1, value, true
  per = ver
  if to == HALF then adm, ok = 0, 0 end
  local left = 0
  if to == OPEN then left = at - now end
  if left < 0 then left = 0 end
  messages[#messages + 1] = { ver, to, left, value }
end

-- Opens at \`from\` for retryTimeoutMs (from closed or half-open), releasing every probe.
local function open(from, value)
  at = from + retry
  adm, ok = 0, 0
  for i = 1, probes do
    if deadline[i] ~= nil then
      deadline[i], holder[i], cleared[i] = nil, nil, true
    end
  end
  transition(OPEN, value)
end

local function oldestDeadline()
  local oldest = nil
  for i = 1, probes do
    local d = deadline[i]
    if d ~= nil and (oldest == nil or d < oldest) then oldest = d end
  end
  return oldest
end

-- A lease past its deadline fails the half-open period: reopen at that deadline.
local function expireProbes()
  if st ~= HALF then return end
  local oldest = oldestDeadline()
  if oldest ~= nil and oldest <= now then open(oldest, '1') end
end

local function trip(total, slow, err)
  if strategy == 'c' then
    if err > threshold then return err end
    return nil
  end
  if total == 0 then return nil end
  local part = err
  if strategy == 's' then part = slow end
  local ratio = part / total
  if ratio > threshold or (ratio == 1 and threshold == 1) then return ratio end
  return nil
end

local function record(code)
  local i = cur % buckets
  if bn[i] ~= cur then bn[i], bt[i], bs[i], be[i] = cur, 0, 0, 0 end
  bt[i] = bt[i] + 1
  if code == SLOW or code == BOTH then bs[i] = bs[i] + 1 end
  if code == ERROR or code == BOTH then be[i] = be[i] + 1 end
  bucketDirty[i], changed = true, true
  if st ~= CLOSED then return end
  local total, slow, err, oldest = 0, 0, 0, cur - buckets
  for j = 0, buckets - 1 do
    if bn[j] > oldest then
      total, slow, err = total + bt[j], slow + bs[j], err + be[j]
    end
  end
  if total < minRequest then return end
  local value = trip(total, slow, err)
  if value ~= nil then open(now, fmt(value)) end
end

local function acquire(token)
  expireProbes()
  if st == CLOSED then return 0, '0' end
  if st == OPEN then
    if now < at then return -1, fmt(at - now) end
    transition(HALF, '')
  end
  if adm < probes then
    -- A free slot: never taken in this period, or given back unused (succeeded ones count in ok).
    local slot = 1
    while deadline[slot] ~= nil do slot = slot + 1 end
    adm = adm + 1
    deadline[slot], holder[slot], cleared[slot], changed = now + retry, token, nil, true
    return 1, per .. ':' .. slot
  end
  local oldest = oldestDeadline()
  if oldest == nil then return -1, '0' end
  return -1, fmt(oldest - now)
end

local function settle(outcome, v, slot, token)
  expireProbes()
  if st ~= HALF or per ~= v or deadline[slot] == nil or holder[slot] ~= token then return end
  deadline[slot], holder[slot], cleared[slot], changed = nil, nil, true, true
  if outcome == '2' then
    -- Unused: the call did not run; the probe is free for another call (and instances are told).
    adm, ver, freed = adm - 1, ver + 1, true
    return
  end
  if outcome == '0' then
    open(now, '1')
    return
  end
  ok = ok + 1
  if ok < probes then return end
  for i = 0, buckets - 1 do
    bn[i], bt[i], bs[i], be[i], bucketDirty[i] = -1, 0, 0, 0, true
  end
  transition(CLOSED, '')
end

local out = {}
for r = 11, #ARGV do
  local op = ARGV[r]
  local kind = sub(op, 1, 1)
  if kind == 'c' then
    for i = 2, #op do record(byte(op, i)) end
  elseif kind == 'a' then
    local k, detail = acquire(sub(op, 2))
    out[#out + 1] = k
    out[#out + 1] = detail
  elseif kind == 's' then
    local v, slot, token = string.match(op, '^s.(%d+):(%d+):(.*)$')
    settle(sub(op, 2, 2), tonumber(v), tonumber(slot), token)
  end
end
expireProbes()

if changed then
  local fields = { 'st', st, 'ver', ver, 'per', per, 'at', fmt(at), 'val', val, 'adm', adm, 'ok', ok }
  for i = 1, probes do
    if deadline[i] ~= nil then
      fields[#fields + 1] = 'p' .. i
      fields[#fields + 1] = fmt(deadline[i])
      fields[#fields + 1] = 'h' .. i
      fields[#fields + 1] = holder[i]
    end
  end
  for i in pairs(bucketDirty) do
    fields[#fields + 1] = 'n' .. i
    fields[#fields + 1] = bn[i]
    fields[#fields + 1] = 't' .. i
    fields[#fields + 1] = bt[i]
    fields[#fields + 1] = 's' .. i
    fields[#fields + 1] = bs[i]
    fields[#fields + 1] = 'e' .. i
    fields[#fields + 1] = be[i]
  end
  redis.call('HSET', key, unpack(fields))
  local gone = {}
  for i in pairs(cleared) do
    gone[#gone + 1] = 'p' .. i
    gone[#gone + 1] = 'h' .. i
  end
  if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
  redis.call('PEXPIRE', key, ARGV[10])
end

-- The time until the state may change: open, until probing; half-open with every probe held,
-- until the oldest lease's deadline.
local left = 0
if st == OPEN then
  left = at - now
elseif st == HALF and adm >= probes then
  local oldest = oldestDeadline()
  if oldest ~= nil then left = oldest - now end
end
if left < 0 then left = 0 end
-- Each transition, with the time its state holds (the last one's is what the call ends with);
-- a probe given back is told as the state it leaves (a probe is free: no time to wait).
if freed and #messages == 0 then messages[1] = { ver, st, left, val } end
for i = 1, #messages do
  local m = messages[i]
  if i == #messages then m[3] = left end
  redis.call('PUBLISH', channel, m[1] .. '|' .. m[2] .. '|' .. fmt(m[3]) .. '|' .. m[4] .. '|' .. key)
end
local reply = { ver, st, fmt(left), val }
for i = 1, #out do reply[#reply + 1] = out[i] end
return reply
`,
);
