--[[
  Claims an event id.
  KEYS[1] the event's claim   ARGV[1] owner   ARGV[2] now (ms)   ARGV[3] claim ttl (ms)
  ARGV[4] how long the key is kept (ms, the dedupe window)
  Returns {'claimed'}  {'done'}  {'held', remaining ms}
]]
--#include parse-claim

local v = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[2])
if v == 'done' then return {'done'} end
if v then
  local _, expires = parse(v)
  if expires > now then return {'held', expires - now} end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (now + tonumber(ARGV[3])), 'PX', ARGV[4])
return {'claimed'}
