--[[
  Takes a lease if nobody holds it; renews it if the caller already does.
  KEYS[1] lease
  ARGV[1] owner  ARGV[2] ttl in ms
  Returns {1} acquired; {0, holder, remaining ttl in ms} held by someone else
]]
--#include acquire-lease
return acquire_lease(KEYS[1], ARGV[1], ARGV[2])
