--[[
  Forgets the owner's claim (its handling failed), so a retry is handled.
  KEYS[1] the event's claim   ARGV[1] owner
  Returns 1 released; 0 someone else's claim or done (left alone)
]]
--#include parse-claim

local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local owner = parse(v)
if owner ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
