--[[
  Sets the spent of one cap period back to zero (resetSpent). Live reservations, stored limits and
  usage rows stay.
  KEYS[1..7] the ledger's keys (budget-sweep.lua)
  ARGV[1] now (ms)  ARGV[2] period id
  Returns the number of counters dropped (0, 1 or 2)
]]
--#include budget-sweep
budget_sweep(tonumber(ARGV[1]))
return redis.call('HDEL', KEYS[1], 'usd:' .. ARGV[2], 'tokens:' .. ARGV[2])
