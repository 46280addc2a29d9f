--[[
  Creates a web chat conversation; an existing conversation is left as it is.
  KEYS[1] chat (hash)
  ARGV[1] id  ARGV[2] title  ARGV[3] kind  ARGV[4] createdAt  ARGV[5] titled
  Returns {created (0|1), field, value, ...}: the conversation's hash after the step
]]
local chat = KEYS[1]
if redis.call('HEXISTS', chat, 'id') == 1 then
  return {0, unpack(redis.call('HGETALL', chat))}
end
redis.call('HSET', chat, 'id', ARGV[1], 'title', ARGV[2], 'kind', ARGV[3],
  'createdAt', ARGV[4], 'updatedAt', ARGV[4], 'titled', ARGV[5], 'seq', 0)
return {1, unpack(redis.call('HGETALL', chat))}
