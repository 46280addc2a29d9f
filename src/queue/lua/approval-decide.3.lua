--[[
  Settles a pending approval request; the first decision wins.
  KEYS[1] the request (hash: request, status, expiresAt, fingerprint, messageRef, decidedBy, decidedAt)
  KEYS[2] the thread's set of pending request ids
  KEYS[3] the thread's set of remembered call fingerprints (approved with "approved_always")
  ARGV[1] request id
  ARGV[2] outcome: approved | approved_always | denied | expired | cancelled
  ARGV[3] who decided, as JSON, or "" for the system
  ARGV[4] now, ms since the epoch (the caller's clock)
  ARGV[5] pub/sub channel that carries the ids of settled requests
  ARGV[6] time-to-live of the remembered-calls set, ms
  Returns {0}             unknown request (never created, or expired from Redis)
          {2, status}     already settled; nothing changed
          {1, outcome}    settled with ARGV[2]
          {3, "expired"}  a human decision after expiresAt: settled as expired instead
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'pending' then return {2, status} end
local outcome = ARGV[2]
local code = 1
local human = outcome == 'approved' or outcome == 'approved_always' or outcome == 'denied'
if human and tonumber(ARGV[4]) > tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) then
  outcome = 'expired'
  code = 3
end
redis.call('HSET', KEYS[1], 'status', outcome, 'decidedAt', ARGV[4])
if code == 1 and ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'decidedBy', ARGV[3]) end
redis.call('SREM', KEYS[2], ARGV[1])
if outcome == 'approved_always' then
  redis.call('SADD', KEYS[3], redis.call('HGET', KEYS[1], 'fingerprint'))
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
redis.call('PUBLISH', ARGV[5], ARGV[1])
return {code, outcome}
