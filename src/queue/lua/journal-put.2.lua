--[[
  Records what a run owes the chat, fenced by the lease.
  KEYS[1] lease (string)   KEYS[2] render journal (hash)
  ARGV[1] token  ARGV[2] run id (or a posted id's field: run id, newline, key)
  ARGV[3] the snapshot (JSON) (or the posted id)
  Returns 1 written; 0 the token does not hold the lease (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
