--[[
  The spent and live reserved sums of some periods, after the sweep (so no expired reservation
  counts), and the limits setLimit stored for them.
  KEYS[1..7] the ledger's keys (budget-sweep.lua)
  ARGV[1] now (ms)  ARGV[2..] period ids
  Returns six values per period id, in order: spent usd, spent tokens, reserved usd, reserved
  tokens (whole micro-dollars and tokens), the stored usd limit and tokens limit (nil where none)
]]
--#include budget-sweep
budget_sweep(tonumber(ARGV[1]))
local out = {}
for i = 2, #ARGV do
  local su, st = budget_read(KEYS[1], ARGV[i])
  local ru, rt = budget_read(KEYS[2], ARGV[i])
  local lu, lt = budget_limits(ARGV[i], '', '')
  out[#out + 1] = su
  out[#out + 1] = st
  out[#out + 1] = ru
  out[#out + 1] = rt
  out[#out + 1] = lu
  out[#out + 1] = lt
end
return out
