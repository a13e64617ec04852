/**
 * The start of every Floodgate script. `now` is ARGV[1] when the backend was given a shared
 * time source, else Redis's own clock (TIME, with microseconds), so that instances need no
 * synchronised clocks (a script may read TIME and then write since Redis 5, which replicates
 * scripts by their effects). `fmt` writes numbers with full precision, for stored times
 * (`tostring` keeps 14 digits, too few for epoch milliseconds with fractions).
 */
export const LUA_PRELUDE = `
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function fmt(x) return string.format('%.17g', x) end
`;
