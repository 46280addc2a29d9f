--[[
  Appends one item to a thread's inbox and sets the thread's wake flag.
  KEYS[1] inbox (list)   KEYS[2] wake (string)   KEYS[3] seq (counter)
  KEYS[4] control (hash) KEYS[5] lease (string)
  ARGV[1] the item as a JSON object without "seq" and "at" (starts with '{', has at least one field)
  ARGV[2] cap: the most items the inbox may hold (>= 1)
  ARGV[3] drop policy when full: "new" refuses this item, "old" drops the oldest items
  ARGV[4] the item's delivery mode; "interrupt" discards every queued message first, sets
          control.abortAt to seq - 1 and bumps control.stops so that the run in progress aborts
  ARGV[5] now (ms, the caller's clock): the item's "at" and the wake marker's time
  KEYS[6] the item's event marker (string, in the thread's slot; "" ARGV[6] when it has no event id)
  ARGV[6] the item's event id or ""   ARGV[7] how long the event marker is kept (ms)
  Returns {0, depth, active}                          refused: the inbox is full (policy "new")
          {1, seq, depth, woke, active, marker, dropped...}   queued
          {2, seq, depth, active}                     this event id was appended before as seq
                                                      (a platform retry after a refused WAIT)
    woke   1 when the wake flag was newly set (value marker): the caller must add a wake job.
           Never while a lease is held: the holder takes the item at a checkpoint, or finds it
           when it tries to release (RELEASE checks the inbox), or re-wakes the thread when it
           hands over or loses the lease; a dead holder's job is rerun by BullMQ's stalled check
    active 1 when a lease is held (a run is in progress)
    dropped the JSON of each item removed to make room or discarded by the interrupt
]]
--#include split-queued

local now = tonumber(ARGV[5])
local active = redis.call('EXISTS', KEYS[5])
local seq = redis.call('INCR', KEYS[3])
-- Idempotent per event id: a retry finds the seq the first attempt stored. SET NX both checks and
-- writes the marker (a GET first would cost one more command on every delivery); a retry spends a
-- seq it does not use (seqs only need to grow; gaps are harmless).
local marked = false
if ARGV[6] ~= '' then
  if not redis.call('SET', KEYS[6], seq, 'NX', 'PX', ARGV[7]) then
    return {2, tonumber(redis.call('GET', KEYS[6])), redis.call('LLEN', KEYS[1]), active}
  end
  marked = true
end
local cap = tonumber(ARGV[2])
local dropped = {}
if ARGV[4] == 'interrupt' then
  local keep
  dropped, keep = split_queued(redis.call('LRANGE', KEYS[1], 0, -1))
  redis.call('DEL', KEYS[1])
  if #keep > 0 then redis.call('RPUSH', KEYS[1], unpack(keep)) end
end
-- The cap is checked after the push, from RPUSH's reply, so an inbox with room (the usual case)
-- costs no LLEN. A refused item is popped again and its event marker removed, so a retry is
-- judged afresh.
local item = '{"seq":' .. seq .. ',"at":' .. now .. ',' .. string.sub(ARGV[1], 2)
local depth = redis.call('RPUSH', KEYS[1], item)
if depth > cap then
  if ARGV[3] == 'new' then
    redis.call('RPOP', KEYS[1])
    if marked then redis.call('DEL', KEYS[6]) end
    return {0, depth - 1, active}
  end
  while depth > cap do
    table.insert(dropped, redis.call('LPOP', KEYS[1]))
    depth = depth - 1
  end
end
if ARGV[4] == 'interrupt' then
  local current = tonumber(redis.call('HGET', KEYS[4], 'abortAt') or '0')
  if seq - 1 > current then redis.call('HSET', KEYS[4], 'abortAt', seq - 1) end
  redis.call('HINCRBY', KEYS[4], 'ver', 1)
  redis.call('HINCRBY', KEYS[4], 'stops', 1)
end
local marker = 'pending:' .. now .. ':' .. seq
local woke = 0
if active == 0 and redis.call('SET', KEYS[2], marker, 'NX') then woke = 1 end
local out = {1, seq, depth, woke, active, marker}
for _, d in ipairs(dropped) do table.insert(out, d) end
return out
