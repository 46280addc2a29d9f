--[[
  A wake job's first step: clears the wake flag, then takes the lease by the lease's own rule.
  Taking ahead, it then reads the inflight list and, when that is empty (and, with the journal in
  use, the render journal holds nothing), takes by TAKE's "next" rule: the reads and the first take
  a new holder makes at once, in the step that gave it the lease.
  KEYS[1] wake  KEYS[2] lease  KEYS[3] control  KEYS[4] inflight  KEYS[5] inbox  KEYS[6] render journal
  ARGV[1] owner  ARGV[2] ttl in ms  ARGV[3] "1" takes ahead, "" does not
  ARGV[4] collect debounce in ms  ARGV[5] now (ms, the caller's clock)  ARGV[6] "1" the journal is in use
  Returns {1, abortAt, ver, stops} acquired (the control state read in the same step);
          taking ahead {1, abortAt, ver, stops, n, n inflight items..., take...}, where take is
          TAKE's reply without its control fields ({0, waitMs} or {1, items...}) or nothing (not taken);
          {0, holder, remaining ttl in ms} held by someone else
]]
--#include acquire-lease
--#include take-items
redis.call('DEL', KEYS[1])
local r = acquire_lease(KEYS[2], ARGV[1], ARGV[2])
if r[1] ~= 1 then return r end
local c = redis.call('HMGET', KEYS[3], 'abortAt', 'ver', 'stops')
local out = {1, c[1] or '0', c[2] or '0', c[3] or '0'}
if ARGV[3] ~= '1' then return out end
local inflight = redis.call('LRANGE', KEYS[4], 0, -1)
table.insert(out, #inflight)
for _, v in ipairs(inflight) do table.insert(out, v) end
if #inflight > 0 or (ARGV[6] == '1' and redis.call('EXISTS', KEYS[6]) == 1) then return out end
-- The control state read above is the take's too: nothing between them changes it.
for _, v in ipairs(take_items(KEYS[5], KEYS[4], 'next', tonumber(ARGV[4]), tonumber(ARGV[5]))) do
  table.insert(out, v)
end
return out
