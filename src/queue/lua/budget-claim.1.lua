--[[
  Claims an id until a time (claimOnce), by the caller's clock: the ids whose time is up go first,
  then the id is claimed unless it is still held.
  KEYS[1] the claims (zset: id by until when it is held, ms; BudgetKeys.claims)
  ARGV[1] now (ms)  ARGV[2] id  ARGV[3] until (ms)
  Returns 1 claimed; 0 held by an earlier claim
]]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return 1
