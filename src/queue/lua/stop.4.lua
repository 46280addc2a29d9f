--[[
  Aborts everything delivered to a thread so far.
  KEYS[1] inbox  KEYS[2] seq  KEYS[3] control  KEYS[4] lease
  Sets control.abortAt to the last seq (a run whose first item is at or before it aborts, a later
  one does not), bumps control.ver and control.stops, and removes the queued messages (newSession items stay).
  Returns {abortAt, active, discarded...}
]]
--#include split-queued

local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local current = tonumber(redis.call('HGET', KEYS[3], 'abortAt') or '0')
if seq > current then redis.call('HSET', KEYS[3], 'abortAt', seq) end
redis.call('HINCRBY', KEYS[3], 'ver', 1)
redis.call('HINCRBY', KEYS[3], 'stops', 1)
local drop, keep = split_queued(redis.call('LRANGE', KEYS[1], 0, -1))
redis.call('DEL', KEYS[1])
if #keep > 0 then redis.call('RPUSH', KEYS[1], unpack(keep)) end
local out = {seq, redis.call('EXISTS', KEYS[4])}
for _, d in ipairs(drop) do table.insert(out, d) end
return out
