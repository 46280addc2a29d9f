--[[
  Extends the lease of its owner.
  KEYS[1] lease
  ARGV[1] owner  ARGV[2] ttl in ms
  Returns 1 extended; 0 the caller does not hold the lease (lost)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
