--[[
  Reads one branch of a session: walks from the leaf to the root through the entry index
  (no JSON decoding), stops at the first kept entry of the latest compaction on the path, then
  fetches only those list elements (contiguous runs with LRANGE), plus the (at most two) entries
  before them whose settings are still in force. Cost: O(entries returned).

  KEYS[1] session list   {t}:s:<sid>   element 0 = header
  KEYS[2] entry index    {t}:s:<sid>:idx   entryId -> index value (see append.lua)
  KEYS[3] leaves hash    {t}:leaves

  ARGV[1] session id
  ARGV[2] leaf id ("" = the session's stored leaf)

  Returns:
    {1, leafId, fetched, header, thinking, model, entry...}
        entries root->leaf; leafId "" = empty branch; fetched = list elements read, header and
        carriers included; thinking / model = the JSON line of the latest thinking level change /
        model carrier on the path before the first entry returned, "" when there is none, "?"
        when the index cannot tell (entries indexed before carriers existed)
    {-2}              session does not exist
    {-5, leafId}      the leaf id is not an entry of the session
]]
local header = redis.call("LINDEX", KEYS[1], 0)
if not header then return {-2} end
local leaf = ARGV[2]
if leaf == "" then leaf = redis.call("HGET", KEYS[3], ARGV[1]) or "" end
if leaf == "" then return {1, "", 1, header, "", ""} end

local positions = {}
local stop = nil
local before = ""
local current = leaf
while current do
  local v = redis.call("HGET", KEYS[2], current)
  if not v then
    if current == leaf then return {-5, leaf} end
    -- A lost ancestor: nothing before it is known.
    before = ""
    break
  end
  local pos, parent, kept = string.match(v, "^(%d+)\t([^\t]*)\t([^\t]*)")
  positions[#positions + 1] = tonumber(pos)
  before = parent
  if stop and current == stop then break end
  if not stop and kept ~= "" then stop = kept end
  if parent == "" then break end
  current = parent
end

local fetched = 1
-- The line of a carrier named by the index value of `before` (the parent of the first entry).
local thinking = ""
local model = ""
if before ~= "" then
  local v = redis.call("HGET", KEYS[2], before)
  local t, m = nil, nil
  if v then t, m = string.match(v, "^[^\t]*\t[^\t]*\t[^\t]*\t([^\t]*)\t([^\t]*)$") end
  if not t then
    thinking = "?"
    model = "?"
  else
    for i, id in ipairs({t, m}) do
      local line = id
      if id ~= "" and id ~= "?" then
        line = ""
        local cv = redis.call("HGET", KEYS[2], id)
        if cv then
          line = redis.call("LINDEX", KEYS[1], tonumber(string.match(cv, "^(%d+)"))) or ""
          fetched = fetched + 1
        end
      end
      if i == 1 then thinking = line else model = line end
    end
  end
end

-- positions run leaf->root; read them root->leaf in contiguous runs.
local out = {1, leaf, 1, header, thinking, model}
local i = #positions
while i >= 1 do
  local from = positions[i]
  local to = from
  local j = i - 1
  while j >= 1 and positions[j] == to + 1 do
    to = to + 1
    j = j - 1
  end
  local run = redis.call("LRANGE", KEYS[1], from, to)
  for _, line in ipairs(run) do out[#out + 1] = line end
  fetched = fetched + #run
  i = j
end
out[3] = fetched
return out
