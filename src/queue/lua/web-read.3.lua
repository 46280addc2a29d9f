--[[
  A conversation's messages at one instant.
  KEYS[1] chat (hash)  KEYS[2] order (list)  KEYS[3] msgs (hash)
  Returns nil when there is no conversation, else the messages' JSON, oldest first
]]
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return nil end
local ids = redis.call('LRANGE', KEYS[2], 0, -1)
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[3], unpack(ids))
