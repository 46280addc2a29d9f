--[[
  Deletes the lease of its owner.
  KEYS[1] lease
  ARGV[1] owner
  Returns 1 deleted; 0 not the owner's (nothing changed)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
