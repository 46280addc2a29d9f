--[[
  Forgets what a run owed (the chat shows its final state) and the ids its posts got, fenced by the
  lease. The hash holds one thread's few records, so listing its fields is cheap.
  KEYS[1] lease (string)   KEYS[2] render journal (hash)
  ARGV[1] token  ARGV[2] run id  ARGV[3] the prefix of its posted ids' fields (run id and a newline)
  Returns 1 done; 0 the token does not hold the lease (nothing changed)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(field, 1, #ARGV[3]) == ARGV[3] then redis.call('HDEL', KEYS[2], field) end
end
return 1
