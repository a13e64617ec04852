/**
 * The start of every Floodgate script. `now` is ARGV[1] when the backend was given a shared
 * time source, else Redis's own clock (TIME, with microseconds), so that instances need no
 * synchronised clocks. `fmt` writes numbers with full precision (`tostring` keeps 14 digits,
 * too few for epoch milliseconds with fractions).
 */
export const LUA_PRELUDE = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function fmt(x) return string.format('%.17g', x) end
`;
