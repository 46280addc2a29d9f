--[[
  Creates a schedule unless its id exists or, for a chat schedule, its thread or its person has as
  many chat schedules as the limit: counted in the step that adds, so racing creates never pass one.
  KEYS[1] record (string)  KEYS[2] all (set)  KEYS[3] the thread's index (hash: id -> origin)
  KEYS[4] the person's index (set of chat schedule ids)
  ARGV[1] id  ARGV[2] record (JSON)  ARGV[3] origin (chat|config)  ARGV[4] per-thread limit
  ARGV[5] per-person limit
  Returns 'ok'; 'exists'; 'thread' or 'user': that limit is reached (nothing written)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if ARGV[3] == 'chat' then
  local chats = 0
  for _, origin in ipairs(redis.call('HVALS', KEYS[3])) do
    if origin == 'chat' then chats = chats + 1 end
  end
  if chats >= tonumber(ARGV[4]) then return 'thread' end
  if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[5]) then return 'user' end
  redis.call('SADD', KEYS[4], ARGV[1])
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return 'ok'
