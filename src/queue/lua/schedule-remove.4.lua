--[[
  Removes a schedule and its place in every index. The caller read the record to name its index
  keys; when it no longer is where the caller read it (a put in between), nothing is removed and
  the record as it is now goes back, for the caller to try again with its keys.
  KEYS[1] record (string)  KEYS[2] all (set)  KEYS[3] its thread's index (hash)
  KEYS[4] its person's index (set)
  ARGV[1] id  ARGV[2] the record's place as the caller read it (schedule-place.lua)
  Returns {1} removed; {0} there was no record; {-1, the stored record (JSON)} it moved (nothing
  removed)
]]
--#include schedule-place
local raw = redis.call('GET', KEYS[1])
if not raw then return {0} end
if schedule_place(raw) ~= ARGV[2] then return {-1, raw} end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
return {1}
