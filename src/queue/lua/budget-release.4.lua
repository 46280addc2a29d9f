--[[
  Drops a call's reservation without spending (the call was not made); nothing when there is none.
  No settlement: a later settle of the call id still counts its spend.
  KEYS[1..4] the ledger's first four keys (budget-sweep.lua)
  ARGV[1] call id
  Returns 1 dropped; 0 there was none
]]
--#include budget-drop
if budget_drop(ARGV[1]) then return 1 end
return 0
