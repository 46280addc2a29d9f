-- split_queued(list): splits queued items into those a stop or interrupt drops and those it keeps
-- (`newSession` items: a `/new` must survive a later stop or interrupt).
local function split_queued(list)
  local drop, keep = {}, {}
  for _, raw in ipairs(list) do
    local ok, item = pcall(cjson.decode, raw)
    if ok and type(item) == 'table' and item.kind ~= 'message' then table.insert(keep, raw)
    else table.insert(drop, raw) end
  end
  return drop, keep
end
