--[[
  `gcraPenalize` (src/adapters/render/rate-limiter.ts) atomically: moves the arrival time so that no
  request is allowed before now + retry-after.
  KEYS[1] the channel's budget key
  ARGV[1] now (ms)  ARGV[2] the platform's retry-after (ms, rounded up)  ARGV[3] toleranceMs of the
  channel's rule
  Returns 1
]]
local now = tonumber(ARGV[1])
local floor = now + tonumber(ARGV[2]) + tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < floor then tat = floor end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', tat - now + 1000)
return 1
