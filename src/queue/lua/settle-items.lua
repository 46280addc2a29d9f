-- settle_items(inflight, inbox, drop, persisted): SETTLE's rule (SETTLE and FINISH share it).
-- Inflight items whose seq is not in `persisted` (a set) go back to the inbox head in order;
-- persisted ones are removed when `drop`, else kept. Returns the number of items moved back.
local function settle_items(inflight, inbox, drop, persisted)
  local raw = redis.call('LRANGE', inflight, 0, -1)
  -- Nothing inflight: nothing to delete or move (the end of most runs).
  if #raw == 0 then return 0 end
  local keep, back = {}, {}
  for _, r in ipairs(raw) do
    local seq = string.match(r, '^{"seq":(%d+)')
    if seq and persisted[seq] then table.insert(keep, r) else table.insert(back, r) end
  end
  -- Every item stays where it is: rewriting the list would change nothing.
  if not drop and #back == 0 then return 0 end
  redis.call('DEL', inflight)
  if not drop and #keep > 0 then redis.call('RPUSH', inflight, unpack(keep)) end
  for i = #back, 1, -1 do redis.call('LPUSH', inbox, back[i]) end
  return #back
end
