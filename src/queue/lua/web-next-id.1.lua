--[[
  The next message number of a conversation.
  KEYS[1] chat (hash)
  Returns the number, or nil when there is no conversation (so a message is never numbered into a
  conversation that was removed)
]]
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return nil end
return redis.call('HINCRBY', KEYS[1], 'seq', 1)
