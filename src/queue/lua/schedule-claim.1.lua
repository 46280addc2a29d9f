--[[
  The exactly-once fence: records an occurrence as handled when the schedule exists, is not paused
  and the occurrence is newer (greater) than its last one; otherwise changes nothing. The record is
  re-encoded by cjson, which keeps 14 significant digits of a number (a ms timestamp has 13).
  KEYS[1] record (string)
  ARGV[1] occurrence  ARGV[2] its run (JSON)  ARGV[3] occurrences missed before it
  Returns the record as it was before (JSON); nil when refused
]]
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local r = cjson.decode(raw)
local occurrence = tonumber(ARGV[1])
if r.paused == true then return false end
if type(r.lastOccurrence) == 'number' and occurrence <= r.lastOccurrence then return false end
local run = cjson.decode(ARGV[2])
r.lastOccurrence = occurrence
r.lastRun = run
if run.status ~= 'skipped' then r.runs = (r.runs or 0) + 1 end
r.missed = (r.missed or 0) + tonumber(ARGV[3])
redis.call('SET', KEYS[1], cjson.encode(r))
return raw
