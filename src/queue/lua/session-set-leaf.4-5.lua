--[[
  Moves a session's leaf (branching), fenced like append.

  KEYS[1] meta hash      {t}:meta
  KEYS[2] session list   {t}:s:<sid>
  KEYS[3] entry index    {t}:s:<sid>:idx
  KEYS[4] leaves hash    {t}:leaves
  KEYS[5] lease key      {t}:lease  (only read when ARGV[3] is not empty)

  ARGV[1] session id
  ARGV[2] entry id ("" = before the first entry)
  ARGV[3] fence token ("" = no fence check)
  ARGV[4] now, ms since epoch

  Returns: {1} moved · {-1} lease lost · {-2} session does not exist · {-5} entry does not exist
]]
if ARGV[3] ~= "" then
  if redis.call("GET", KEYS[5]) ~= ARGV[3] then return {-1} end
end
if redis.call("EXISTS", KEYS[2]) == 0 then return {-2} end
if ARGV[2] ~= "" and redis.call("HEXISTS", KEYS[3], ARGV[2]) == 0 then return {-5} end
redis.call("HSET", KEYS[4], ARGV[1], ARGV[2])
if redis.call("HGET", KEYS[1], "currentSessionId") == ARGV[1] then
  redis.call("HSET", KEYS[1], "leafId", ARGV[2])
end
redis.call("HSET", KEYS[1], "updatedAt", ARGV[4])
return {1}
