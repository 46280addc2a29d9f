--[[
  Removes one message.
  KEYS[1] msgs (hash)  KEYS[2] order (list)
  ARGV[1] message id
  Returns 1 when it existed
]]
local n = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 1, ARGV[1])
return n
