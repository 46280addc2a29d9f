-- acquire_lease(key, owner, ttl): the lease's acquire rule, so a script that takes a lease as part
-- of a larger step (the worker's wake acquire) takes it exactly as `lease.acquire` does: set it if
-- nobody holds it, renew it if the caller already does. Returns {1} or {0, holder, remaining ttl in ms}.
local function acquire_lease(key, owner, ttl)
  if redis.call('SET', key, owner, 'NX', 'PX', ttl) then return {1} end
  local holder = redis.call('GET', key)
  if holder == owner then
    redis.call('PEXPIRE', key, ttl)
    return {1}
  end
  return {0, holder or '', redis.call('PTTL', key)}
end
