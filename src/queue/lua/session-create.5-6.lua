--[[
  Writes a new session (header and first entries) and makes it the thread's current session,
  atomically, and only while the caller still holds the thread's lease (when a fence is given).

  KEYS[1] meta hash      {t}:meta      threadKey, currentSessionId, leafId, model, thinkingLevel, updatedAt
  KEYS[2] session list   {t}:s:<sid>   element 0 = header, then one JSON entry per element
  KEYS[3] entry index    {t}:s:<sid>:idx   entryId -> index value (see append.lua)
  KEYS[4] leaves hash    {t}:leaves    sessionId -> leaf entry id ("" = before the first entry)
  KEYS[5] sessions list  {t}:sessions  session ids in creation order
  KEYS[6] lease key      {t}:lease     (only read, and only when ARGV[2] is not empty)

  ARGV[1] session id
  ARGV[2] fence token ("" = no fence check)
  ARGV[3] header JSON line
  ARGV[4] now, ms since epoch
  ARGV[5] model "provider/id" to record ("" = leave the thread's as it is)
  ARGV[6] thinking level to record ("" = leave it)
  ARGV[7] thread key (recorded in the meta hash: the session belongs to it, whatever its header says)
  ARGV[8] n, number of entries; then for each entry 2 values: JSON line, "<id>\t<index value>"

  Returns:
    {1, leafId}   created ("" = no entries)
    {-1}          lease lost (GET KEYS[6] ~= token); nothing written
    {-3}          a session with this id exists; nothing written
]]
if ARGV[2] ~= "" then
  if redis.call("GET", KEYS[6]) ~= ARGV[2] then return {-1} end
end
if redis.call("EXISTS", KEYS[2]) == 1 then return {-3} end

local sid = ARGV[1]
-- One RPUSH and one HSET for the header and every entry, one HSET for the meta fields: a new
-- thread's session costs as few commands as its keys allow.
local n = tonumber(ARGV[8])
local lines = {ARGV[3]}
local index = {}
local leaf = ""
for k = 0, n - 1 do
  local value = ARGV[10 + k * 2]
  lines[#lines + 1] = ARGV[9 + k * 2]
  leaf = string.match(value, "^([^\t]*)")
  index[#index + 1] = leaf
  index[#index + 1] = string.sub(value, #leaf + 2)
end
redis.call("RPUSH", KEYS[2], unpack(lines))
if n > 0 then redis.call("HSET", KEYS[3], unpack(index)) end
redis.call("HSET", KEYS[4], sid, leaf)
local meta = {"threadKey", ARGV[7], "currentSessionId", sid, "leafId", leaf, "updatedAt", ARGV[4]}
if ARGV[5] ~= "" then meta[#meta + 1] = "model"; meta[#meta + 1] = ARGV[5] end
if ARGV[6] ~= "" then meta[#meta + 1] = "thinkingLevel"; meta[#meta + 1] = ARGV[6] end
redis.call("HSET", KEYS[1], unpack(meta))
redis.call("RPUSH", KEYS[5], sid)
return {1, leaf}
