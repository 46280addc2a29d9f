-- Where a stored schedule is indexed: its thread key and its person (`<platform>:<owner id>`), a
-- newline apart, spelled as placeOf in src/queue/schedules/redis-store.ts spells it; '' when there
-- is no record (GET gave false). A put or remove names the index keys of the record it read, and
-- compares places to know that the record still belongs to them.
local function schedule_place(raw)
  if not raw then return '' end
  local r = cjson.decode(raw)
  return r.target.threadKey .. '\n' .. r.target.platform .. ':' .. r.owner.id
end
