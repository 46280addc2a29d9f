--[[
  Reads what the sweeper and /status need, at one instant.
  KEYS[1] inbox  KEYS[2] inflight  KEYS[3] lease  KEYS[4] wake
  Returns {inbox length, inflight length, lease exists, wake flag value or ""}
]]
return {redis.call('LLEN', KEYS[1]), redis.call('LLEN', KEYS[2]), redis.call('EXISTS', KEYS[3]),
  redis.call('GET', KEYS[4]) or ''}
