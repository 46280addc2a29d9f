--[[
  Adds or replaces a schedule whole, without limits, moving it to the indexes of its new thread and
  person. The caller read the stored record to name its old index keys; when the record no longer
  is where the caller read it (a put or remove in between), nothing is written and the record as it
  is now goes back, for the caller to try again with its keys.
  KEYS[1] record (string)  KEYS[2] all (set)  KEYS[3] the new thread's index (hash)
  KEYS[4] the new person's index (set)  KEYS[5] the old thread's index  KEYS[6] the old person's
  index (the new ones again when there was no record)
  ARGV[1] id  ARGV[2] record (JSON)  ARGV[3] origin (chat|config)
  ARGV[4] the stored record's place as the caller read it (schedule-place.lua; '' for none)
  Returns {1} written; {0, the stored record (JSON) or nil} it moved (nothing written)
]]
--#include schedule-place
local raw = redis.call('GET', KEYS[1])
if schedule_place(raw) ~= ARGV[4] then return {0, raw} end
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
if ARGV[3] == 'chat' then redis.call('SADD', KEYS[4], ARGV[1]) end
return {1}
