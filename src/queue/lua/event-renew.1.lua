--[[
  Extends the owner's claim.
  KEYS[1] the event's claim   ARGV[1] owner   ARGV[2] now (ms)   ARGV[3] claim ttl (ms)
  ARGV[4] how long the key is kept (ms)
  Returns 1 renewed; 0 the owner no longer holds it (done, released or taken over)
]]
--#include parse-claim

local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local owner = parse(v)
if owner ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (tonumber(ARGV[2]) + tonumber(ARGV[3])), 'PX', ARGV[4])
return 1
