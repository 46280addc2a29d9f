--[[
  Settles a call once: drops its reservation and adds the actual amount to the spent of the periods
  it was reserved in; without a reservation (expired, released) to the periods the caller names,
  so spend is never lost. Adds the call to the usage rows, and remembers the call id as settled
  (a repeated settle changes nothing).
  KEYS[1..7] the ledger's keys (budget-sweep.lua)  KEYS[8] the day's usage rows (hash:
  `usd:<row>`, `tokens:<row>`, `calls:<row>`)
  ARGV[1] now (ms)  ARGV[2] call id  ARGV[3] when it may be forgotten as settled (ms)
  ARGV[4] usd (micro-dollars)  ARGV[5] tokens  ARGV[6] the usage rows' time to live (ms)
  ARGV[7] the number of fallback periods n, then two per period: its id, when its spent may go
  (ms); then the number of usage rows m, then the rows
  Returns 1 settled; 0 settled before (nothing written but the sweep)
]]
--#include budget-sweep
local call = ARGV[2]
budget_sweep(tonumber(ARGV[1]))
if redis.call('ZSCORE', KEYS[5], call) then return 0 end
local usd, tokens = tonumber(ARGV[4]), tonumber(ARGV[5])
local n = tonumber(ARGV[7])
local reservation = budget_drop(call)
local ids = {}
if reservation then
  ids = reservation.p
else
  for i = 1, n do
    ids[i] = ARGV[7 + 2 * i - 1]
    redis.call('ZADD', KEYS[6], ARGV[7 + 2 * i], ids[i])
  end
end
for _, id in ipairs(ids) do
  if usd > 0 then redis.call('HINCRBY', KEYS[1], 'usd:' .. id, usd) end
  if tokens > 0 then redis.call('HINCRBY', KEYS[1], 'tokens:' .. id, tokens) end
end
local rows = 8 + 2 * n
for j = 1, tonumber(ARGV[rows]) do
  local row = ARGV[rows + j]
  redis.call('HINCRBY', KEYS[8], 'usd:' .. row, usd)
  redis.call('HINCRBY', KEYS[8], 'tokens:' .. row, tokens)
  redis.call('HINCRBY', KEYS[8], 'calls:' .. row, 1)
  redis.call('PEXPIRE', KEYS[8], ARGV[6])
end
redis.call('ZADD', KEYS[5], ARGV[3], call)
return 1
