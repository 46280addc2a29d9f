--[[
  Patches the last run of a schedule when it is the run of the given occurrence (a newer
  occurrence's run is left alone). The patch's occurrence, if any, is ignored.
  KEYS[1] record (string)
  ARGV[1] occurrence  ARGV[2] the patch (JSON object)
  Returns 1 patched; 0 no record, or its last run is another occurrence
]]
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local r = cjson.decode(raw)
if type(r.lastRun) ~= 'table' or r.lastRun.occurrence ~= tonumber(ARGV[1]) then return 0 end
for field, value in pairs(cjson.decode(ARGV[2])) do
  if field ~= 'occurrence' then r.lastRun[field] = value end
end
redis.call('SET', KEYS[1], cjson.encode(r))
return 1
