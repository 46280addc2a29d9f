-- take_items(inbox, inflight, rule, debounce, now): TAKE's rule (TAKE, FINISH and WAKE_ACQUIRE
-- share it). Moves items from the head of `inbox` to `inflight` by `rule`; returns {0, waitMs} (a
-- collect group in its window) or {1, items...}.
-- What take_items left in the inbox, so a caller needs no LLEN after it.
local inbox_left = 0
local function take_items(inbox, inflight, rule, debounce, now)
  local raw = redis.call('LRANGE', inbox, 0, -1)
  local items = {}
  local popped = 0
  for _, r in ipairs(raw) do
    local ok, item = pcall(cjson.decode, r)
    if ok and type(item) == 'table' and tonumber(item.seq) then
      table.insert(items, item)
    elseif #items == 0 then
      -- A damaged item at the head would block the thread forever; it cannot be delivered anyway.
      redis.call('LPOP', inbox)
      popped = popped + 1
    else
      break
    end
  end
  local function steerlike(item)
    return item.kind == 'message' and (item.mode == 'steer' or item.mode == 'interrupt')
  end
  local count = 0
  local head = items[1]
  if rule == 'steer' then
    while items[count + 1] and steerlike(items[count + 1]) do count = count + 1 end
  elseif head then
    if head.kind ~= 'message' then
      if rule == 'next' then count = 1 end
    elseif head.mode == 'followUp' then
      count = 1
    elseif steerlike(head) then
      while items[count + 1] and steerlike(items[count + 1]) do count = count + 1 end
    else
      local newest = 0
      while items[count + 1] and items[count + 1].kind == 'message' and items[count + 1].mode == 'collect' do
        count = count + 1
        local at = tonumber(items[count].at) or 0
        if at > newest then newest = at end
      end
      local waited = now - newest
      if waited < debounce then return {0, debounce - waited} end
    end
  end
  local out = {1}
  for i = 1, count do
    table.insert(out, redis.call('LMOVE', inbox, inflight, 'LEFT', 'RIGHT'))
  end
  inbox_left = #raw - popped - count
  return out
end
