--[[
  Settles the inflight list against what the session holds.
  KEYS[1] inflight  KEYS[2] inbox  KEYS[3] lease
  ARGV[1] token  ARGV[2] "1" removes persisted items, "0" keeps them (the run goes on)
  ARGV[3..] seqs of the inflight items the session holds
  Items not listed go back to the head of the inbox in their original order.
  Returns -1 lost (not the holder), else the number of items moved back
]]
--#include settle-items
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return -1 end
local persisted = {}
for i = 3, #ARGV do persisted[ARGV[i]] = true end
return settle_items(KEYS[1], KEYS[2], ARGV[2] == '1', persisted)
