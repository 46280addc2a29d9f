--[[
  Appends entries to a session list, indexes them, moves the leaf and adds usage, atomically,
  and only while the caller still holds the thread's lease (when a fence is given).

  KEYS[1] meta hash      {t}:meta      currentSessionId, leafId, model, thinkingLevel, usage totals
  KEYS[2] session list   {t}:s:<sid>   element 0 = header, then one JSON entry per element
  KEYS[3] entry index    {t}:s:<sid>:idx   entryId ->
          "<list index>\t<parentId>\t<firstKeptEntryId>\t<thinking carrier>\t<model carrier>"
          (carriers: ids of the latest thinking_level_change and model_change/assistant message
          on the entry's path, itself included; "" = none, "?" = unknown: an ancestor was indexed
          before carriers existed)
  KEYS[4] leaves hash    {t}:leaves    sessionId -> leaf entry id ("" = before the first entry)
  KEYS[5] lease key      {t}:lease     (only read, and only when ARGV[2] is not empty)

  ARGV[1]  session id
  ARGV[2]  fence token ("" = no fence check)
  ARGV[3]  input tokens to add        ARGV[4] output tokens
  ARGV[5]  cacheRead tokens           ARGV[6] cacheWrite tokens
  ARGV[7]  cost to add (float string)
  ARGV[8]  model "provider/id" to record for the current session ("" = unchanged)
  ARGV[9]  thinking level to record ("" = unchanged)
  ARGV[10] now, ms since epoch
  ARGV[11] n, number of entries; then for each entry 5 values:
           JSON line, id, parentId ("" = null), firstKeptEntryId ("" = not a compaction),
           kind ("t" sets the thinking level, "m" the model, "" neither)

  Returns:
    {1, leafId}          appended
    {-1}                 lease lost (GET KEYS[5] ~= token); nothing written
    {-2}                 session does not exist; nothing written
    {-3, id}             id already used in the session (or twice in the batch); nothing written
    {-4, id, parentId}   parent is neither stored nor earlier in the batch; nothing written
]]
local sid = ARGV[1]
local token = ARGV[2]
if token ~= "" then
  if redis.call("GET", KEYS[5]) ~= token then return {-1} end
end
-- Whether the session exists is asked only when nothing else shows it: a parent found in the
-- index proves it (the list and its index are written together by one script and never deleted),
-- which spares the usual append (one entry under a stored parent) the EXISTS.
local known = false
local function missing() return not known and redis.call("EXISTS", KEYS[2]) == 0 end

local W = 5
local n = tonumber(ARGV[11])
local batch = {}
-- Index values of stored parents, read once here and used again for their carriers below.
local stored = {}
for k = 0, n - 1 do
  local base = 12 + k * W
  local id = ARGV[base + 1]
  local parent = ARGV[base + 2]
  if batch[id] then
    if missing() then return {-2} end
    return {-3, id}
  end
  -- The id and its parent in one read (a stored id proves the session too: its index exists).
  local needParent = parent ~= "" and not batch[parent] and not stored[parent]
  local v
  if needParent then
    local got = redis.call("HMGET", KEYS[3], id, parent)
    if got[1] then return {-3, id} end
    v = got[2]
  elseif redis.call("HEXISTS", KEYS[3], id) == 1 then
    return {-3, id}
  end
  if needParent then
    if not v then
      if missing() then return {-2} end
      return {-4, id, parent}
    end
    stored[parent] = v
    known = true
  end
  batch[id] = true
end
if missing() then return {-2} end

-- Push in slices: unpack() of thousands of values would overflow the Lua stack.
local len = 0
local k = 0
while k < n do
  local slice = {}
  local upto = math.min(n, k + 500)
  for j = k, upto - 1 do slice[#slice + 1] = ARGV[12 + j * W] end
  len = redis.call("RPUSH", KEYS[2], unpack(slice))
  k = upto
end

-- The carriers at a parent: from the batch, else from its stored index value.
local carriers = {}
local function parentCarriers(parent)
  if parent == "" then return "", "" end
  local c = carriers[parent]
  if c then return c[1], c[2] end
  local v = stored[parent]
  local t, m = string.match(v, "^[^\t]*\t[^\t]*\t[^\t]*\t([^\t]*)\t([^\t]*)$")
  if not t then return "?", "?" end
  return t, m
end

local first = len - n
local leaf = ""
for j = 0, n - 1 do
  local base = 12 + j * W
  leaf = ARGV[base + 1]
  local parent = ARGV[base + 2]
  local t, m = parentCarriers(parent)
  local kind = ARGV[base + 4]
  if kind == "t" then t = leaf elseif kind == "m" then m = leaf end
  carriers[leaf] = {t, m}
  redis.call("HSET", KEYS[3], leaf,
    (first + j) .. "\t" .. parent .. "\t" .. ARGV[base + 3] .. "\t" .. t .. "\t" .. m)
end
redis.call("HSET", KEYS[4], sid, leaf)

-- The meta fields: one HMGET reads whether the session is current and the usage totals, one HSET
-- writes the new totals with the rest (rather than an HINCRBY a field). The script is atomic, so
-- the read-modify-write cannot interleave with another writer's HINCRBY (addUsage).
local fields = {"input", "output", "cacheRead", "cacheWrite", "cost"}
local adds = {}
local any = false
for i = 1, 5 do
  adds[i] = tonumber(ARGV[2 + i]) or 0
  if adds[i] ~= 0 then any = true end
end
local read = {"currentSessionId"}
if any then for i = 1, 5 do read[#read + 1] = fields[i] end end
local held = redis.call("HMGET", KEYS[1], unpack(read))
local meta = {"updatedAt", ARGV[10]}
if held[1] == sid then
  table.insert(meta, "leafId")
  table.insert(meta, leaf)
  if ARGV[8] ~= "" then
    table.insert(meta, "model")
    table.insert(meta, ARGV[8])
  end
  if ARGV[9] ~= "" then
    table.insert(meta, "thinkingLevel")
    table.insert(meta, ARGV[9])
  end
end
for i = 1, 5 do
  if adds[i] ~= 0 then
    local total = (tonumber(held[1 + i]) or 0) + adds[i]
    table.insert(meta, fields[i])
    -- Token counts stay integers (while a double holds them exactly); the cost keeps every digit a
    -- double holds (tostring gives 14).
    if i < 5 and total >= -9e15 and total <= 9e15 then
      table.insert(meta, string.format("%d", total))
    else
      table.insert(meta, string.format("%.17g", total))
    end
  end
end
redis.call("HSET", KEYS[1], unpack(meta))
return {1, leaf}
