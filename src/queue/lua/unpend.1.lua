--[[
  Removes a thread from the pending set only if no delivery touched it since the sweeper looked.
  KEYS[1] pending (sorted set)
  ARGV[1] thread key  ARGV[2] the score the sweeper read
  Returns 1 removed; 0 the score changed (a new delivery) or the thread is gone
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) return 1 end
return 0
