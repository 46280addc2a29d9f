--[[
  Appends a message, removes the oldest beyond the limit, moves `updatedAt` forward and names an
  untitled conversation.
  KEYS[1] chat (hash)  KEYS[2] msgs (hash)  KEYS[3] order (list)
  ARGV[1] message id  ARGV[2] message JSON  ARGV[3] now  ARGV[4] title from this message ("" when it
  names nothing)  ARGV[5] max messages
  Returns nil when the conversation is gone, else {{removed ids...}, field, value, ...} with the
  conversation's hash after the step
]]
local chat, msgs, order = KEYS[1], KEYS[2], KEYS[3]
if redis.call('HEXISTS', chat, 'id') == 0 then return nil end
redis.call('HSET', msgs, ARGV[1], ARGV[2])
redis.call('RPUSH', order, ARGV[1])
local removed = {}
local max = tonumber(ARGV[5])
while redis.call('LLEN', order) > max do
  local old = redis.call('LPOP', order)
  redis.call('HDEL', msgs, old)
  removed[#removed + 1] = old
end
local now = tonumber(ARGV[3])
if now > tonumber(redis.call('HGET', chat, 'updatedAt') or '0') then
  redis.call('HSET', chat, 'updatedAt', ARGV[3])
end
if ARGV[4] ~= '' and redis.call('HGET', chat, 'titled') ~= '1' then
  redis.call('HSET', chat, 'title', ARGV[4], 'titled', '1')
end
return {removed, unpack(redis.call('HGETALL', chat))}
