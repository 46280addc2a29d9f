--[[
  Reserves a call's worst-case amount against every cap, or against none: refused by the first cap
  (in the caller's order) whose limit the admission rule refuses, unless overridden. A cap's limit
  is, per dimension, the one setLimit stored for its period (KEYS[7]), else the cap's own. Rule
  'fits': refused when spent + reserved + amount would pass the limit; 'under': refused when spent
  + reserved has already reached it. A call id that holds a reservation or was settled answers
  reserved and counts nothing again.
  KEYS[1..7] the ledger's keys (budget-sweep.lua)
  ARGV[1] now (ms)  ARGV[2] call id  ARGV[3] its expiry (ms)  ARGV[4] usd (micro-dollars)
  ARGV[5] tokens  ARGV[6] 1: override the caps  ARGV[7] the admission rule ('fits' or 'under')
  ARGV[8] the number of caps n, then four per cap: its period id, usd limit, tokens limit ('' where
  it does not limit), when its spent may go (ms)
  Returns {1} reserved; {0, i, spent usd, spent tokens, reserved usd, reserved tokens, usd limit,
  tokens limit}: the i-th cap refused it (a limit nil where none applies; nothing written but the
  sweep)
]]
--#include budget-sweep
local now = tonumber(ARGV[1])
local call = ARGV[2]
budget_sweep(now)
if redis.call('HEXISTS', KEYS[3], call) == 1 or redis.call('ZSCORE', KEYS[5], call) then return {1} end
local usd, tokens = tonumber(ARGV[4]), tonumber(ARGV[5])
local under = ARGV[7] == 'under'
local n = tonumber(ARGV[8])
local ids = {}

-- Whether `limit` (false: none) refuses `more` on top of `held`, under the request's rule.
local function refuses(limit, held, more)
  if not limit then return false end
  if under then return held >= limit end
  return held + more > limit
end

for i = 1, n do
  local at = 8 + (i - 1) * 4
  ids[i] = ARGV[at + 1]
  if ARGV[6] ~= '1' then
    local su, st = budget_read(KEYS[1], ids[i])
    local ru, rt = budget_read(KEYS[2], ids[i])
    local lu, lt = budget_limits(ids[i], ARGV[at + 2], ARGV[at + 3])
    if refuses(lu, su + ru, usd) or refuses(lt, st + rt, tokens) then
      return {0, i, su, st, ru, rt, lu, lt}
    end
  end
end
for i = 1, n do
  if usd > 0 then redis.call('HINCRBY', KEYS[2], 'usd:' .. ids[i], usd) end
  if tokens > 0 then redis.call('HINCRBY', KEYS[2], 'tokens:' .. ids[i], tokens) end
  redis.call('ZADD', KEYS[6], ARGV[8 + (i - 1) * 4 + 4], ids[i])
end
redis.call('HSET', KEYS[3], call, cjson.encode({u = usd, t = tokens, p = ids}))
redis.call('ZADD', KEYS[4], ARGV[3], call)
return {1}
