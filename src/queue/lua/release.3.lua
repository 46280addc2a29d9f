--[[
  Releases the lease only when nothing is left to do: the check and the delete are one step, so
  an item appended before it is seen (busy) and one appended after it finds no lease (and wakes).
  KEYS[1] lease  KEYS[2] inbox  KEYS[3] inflight
  ARGV[1] token
  Returns 1 released; 0 busy (inbox or inflight not empty, lease kept); -1 lost (not the holder)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 or redis.call('LLEN', KEYS[3]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
