--[[
  `gcraReserve` (src/adapters/render/rate-limiter.ts) atomically. Every number is a whole
  millisecond, so Lua's doubles are exact.
  KEYS[1] the channel's budget key (holds the theoretical arrival time, ms)
  ARGV[1] now (ms)  ARGV[2] intervalMs  ARGV[3] toleranceMs (from `gcraStep`)
  Returns the wait in ms before the reserved request may be sent (0: now). The reservation is made
  either way, so the caller must send after waiting.
]]
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
local newTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', newTat), 'PX', newTat - now + 1000)
return wait
