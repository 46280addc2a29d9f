--[[
  Pauses or resumes a schedule. A pause keeps the reason given (the runtime's), or none (a
  person's); a resume drops the reason.
  KEYS[1] record (string)
  ARGV[1] 1 pause, 0 resume  ARGV[2] 1 when a reason is given  ARGV[3] the reason
  Returns the record after (JSON); nil when there is none
]]
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local r = cjson.decode(raw)
r.paused = ARGV[1] == '1'
r.pausedReason = nil
if r.paused and ARGV[2] == '1' then r.pausedReason = ARGV[3] end
local after = cjson.encode(r)
redis.call('SET', KEYS[1], after)
return after
