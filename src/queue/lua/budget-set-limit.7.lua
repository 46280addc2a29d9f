--[[
  Stores the limits of one cap period (setLimit): each one given replaces that dimension's limit in
  every later reserve against the period; a dimension not given keeps what was stored before. The
  period is listed in KEYS[6], so its limits go with its spent counters.
  KEYS[1..7] the ledger's keys (budget-sweep.lua)
  ARGV[1] now (ms)  ARGV[2] period id  ARGV[3] usd limit (micro-dollars)  ARGV[4] tokens limit
  ('' where not set)  ARGV[5] when the period's counters and limits may go (ms)
  Returns 1
]]
--#include budget-sweep
budget_sweep(tonumber(ARGV[1]))
local id = ARGV[2]
if ARGV[3] ~= '' then redis.call('HSET', KEYS[7], 'usd:' .. id, ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[7], 'tokens:' .. id, ARGV[4]) end
redis.call('ZADD', KEYS[6], ARGV[5], id)
return 1
