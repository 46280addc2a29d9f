/**
 * The runtime's Lua scripts. Each is one atomic step on the keys of one thread (one hash slot), so
 * they also run on Redis Cluster. docs/runtime.md explains how they fit together; the header of
 * each script names every KEYS and ARGV entry and each return value. The lease's own steps (take,
 * renew, force release) are `RedisLeaseStore`'s (queue/lease/redis-store.ts); the steps here that
 * read the lease key check its token the same way.
 */

import { ACQUIRE_LEASE_LUA } from "../lease/redis-store.js";
import type { LuaScript } from "./run-script.js";

/**
 * Appends the thread's control state to a take's reply, after its status: {status, abortAt, ver,
 * stops, rest...}. Read after the items moved, in the same step, so the holder needs no read of
 * its own.
 */
const WITH_CONTROL = `
local function with_control(t, control)
  local c = redis.call('HMGET', control, 'abortAt', 'ver', 'stops')
  local out = {t[1], c[1] or '0', c[2] or '0', c[3] or '0'}
  for i = 2, #t do out[#out + 1] = t[i] end
  return out
end
`;

/** Keeps `newSession` items (a `/new` must survive a later stop or interrupt). */
const SPLIT_QUEUED = `
local function split_queued(list)
  local drop, keep = {}, {}
  for _, raw in ipairs(list) do
    local ok, item = pcall(cjson.decode, raw)
    if ok and type(item) == 'table' and item.kind ~= 'message' then table.insert(keep, raw)
    else table.insert(drop, raw) end
  end
  return drop, keep
end
`;

export const APPEND: LuaScript = {
  numberOfKeys: 6,
  lua:
    `--[[
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
]]` +
    SPLIT_QUEUED +
    `
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
`,
};

export const STOP: LuaScript = {
  numberOfKeys: 4,
  lua:
    `--[[
  Aborts everything delivered to a thread so far.
  KEYS[1] inbox  KEYS[2] seq  KEYS[3] control  KEYS[4] lease
  Sets control.abortAt to the last seq (a run whose first item is at or before it aborts, a later
  one does not), bumps control.ver and control.stops, and removes the queued messages (newSession items stay).
  Returns {abortAt, active, discarded...}
]]` +
    SPLIT_QUEUED +
    `
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local current = tonumber(redis.call('HGET', KEYS[3], 'abortAt') or '0')
if seq > current then redis.call('HSET', KEYS[3], 'abortAt', seq) end
redis.call('HINCRBY', KEYS[3], 'ver', 1)
redis.call('HINCRBY', KEYS[3], 'stops', 1)
local drop, keep = split_queued(redis.call('LRANGE', KEYS[1], 0, -1))
redis.call('DEL', KEYS[1])
if #keep > 0 then redis.call('RPUSH', KEYS[1], unpack(keep)) end
local out = {seq, redis.call('EXISTS', KEYS[4])}
for _, d in ipairs(drop) do table.insert(out, d) end
return out
`,
};

export const RELEASE: LuaScript = {
  numberOfKeys: 3,
  lua: `--[[
  Releases the lease only when nothing is left to do: the check and the delete are one step, so
  an item appended before it is seen (busy) and one appended after it finds no lease (and wakes).
  KEYS[1] lease  KEYS[2] inbox  KEYS[3] inflight
  ARGV[1] token
  Returns 1 released; 0 busy (inbox or inflight not empty, lease kept); -1 lost (not the holder)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 or redis.call('LLEN', KEYS[3]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`,
};

/**
 * TAKE's rule as a Lua function (TAKE and FINISH share it): moves items from the head of `inbox` to
 * `inflight` by `rule`; returns {0, waitMs} (a collect group in its window) or {1, items...}.
 */
const TAKE_ITEMS = `
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
`;

/**
 * SETTLE's rule as a Lua function (SETTLE and FINISH share it): inflight items whose seq is not in
 * `persisted` (a set) go back to the inbox head in order; persisted ones are removed when `drop`,
 * else kept. Returns the number of items moved back.
 */
const SETTLE_ITEMS = `
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
`;

export const TAKE: LuaScript = {
  numberOfKeys: 4,
  lua: `--[[
  Moves items from the head of the inbox to the inflight list, never out of order.
  KEYS[1] inbox  KEYS[2] inflight  KEYS[3] lease  KEYS[4] control
  ARGV[1] token  ARGV[2] rule: "steer" | "followUp" | "next"  ARGV[3] collect debounce in ms
  ARGV[4] now (ms, the caller's clock), compared with the items' "at"
  Rules: "steer" takes the consecutive steer/interrupt messages at the head. "next" takes one
  followUp message, or the consecutive steer/interrupt messages, or the consecutive collect
  messages once the newest is older than the debounce, or one newSession item. "followUp" is
  "next" without the newSession item (the run ends first).
  Returns {-1} lost (not the holder); {0, abortAt, ver, stops, waitMs} a collect group is still in
          its window; {1, abortAt, ver, stops, items...} the items moved (possibly none). The
          control fields are the control hash's after the move.
]]
${TAKE_ITEMS}
${WITH_CONTROL}
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {-1} end
return with_control(take_items(KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])), KEYS[4])
`,
};

export const SETTLE: LuaScript = {
  numberOfKeys: 3,
  lua: `--[[
  Settles the inflight list against what the session holds.
  KEYS[1] inflight  KEYS[2] inbox  KEYS[3] lease
  ARGV[1] token  ARGV[2] "1" removes persisted items, "0" keeps them (the run goes on)
  ARGV[3..] seqs of the inflight items the session holds
  Items not listed go back to the head of the inbox in their original order.
  Returns -1 lost (not the holder), else the number of items moved back
]]
${SETTLE_ITEMS}
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return -1 end
local persisted = {}
for i = 3, #ARGV do persisted[ARGV[i]] = true end
return settle_items(KEYS[1], KEYS[2], ARGV[2] == '1', persisted)
`,
};

export const FINISH: LuaScript = {
  numberOfKeys: 4,
  lua: `--[[
  The end of a finished run, as one step under one lease check: SETTLE (persisted items removed),
  then TAKE by the "next" rule, then, when nothing was taken, RELEASE's rule: the lease is deleted
  only if the inbox and the inflight list are empty. Same effect as the three scripts back to back
  with nothing between them.
  KEYS[1] inbox  KEYS[2] inflight  KEYS[3] lease  KEYS[4] control
  ARGV[1] token  ARGV[2] collect debounce in ms  ARGV[3] now (ms, the caller's clock)
  ARGV[4] the holder's context estimate in tokens, recorded in the control hash ("" = leave it)
  ARGV[5..] seqs of the inflight items the session holds
  Returns {-1} lost (not the holder, nothing changed); {0, abortAt, ver, stops, waitMs} settled, a
          collect group is in its window; {1, abortAt, ver, stops, items...} settled, the next
          items moved (lease kept); {2} settled, nothing left: the lease is deleted; {3} settled,
          nothing taken, not empty: lease kept
]]
${SETTLE_ITEMS}
${TAKE_ITEMS}
${WITH_CONTROL}
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {-1} end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[4], 'contextTokens', ARGV[4]) end
local persisted = {}
for i = 5, #ARGV do persisted[ARGV[i]] = true end
settle_items(KEYS[2], KEYS[1], true, persisted)
local t = take_items(KEYS[1], KEYS[2], 'next', tonumber(ARGV[2]), tonumber(ARGV[3]))
if t[1] ~= 1 or #t > 1 then return with_control(t, KEYS[4]) end
-- RELEASE's check needs no read here: the inflight list was just emptied (every item removed or
-- moved back to the inbox, which the take then read), and the take counted what it left.
if inbox_left > 0 then return {3} end
redis.call('DEL', KEYS[3])
return {2}
`,
};

export const WAKE_ACQUIRE: LuaScript = {
  numberOfKeys: 6,
  lua: `--[[
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
${ACQUIRE_LEASE_LUA}
${TAKE_ITEMS}
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
`,
};

export const PROBE: LuaScript = {
  numberOfKeys: 4,
  lua: `--[[
  Reads what the sweeper and /status need, at one instant.
  KEYS[1] inbox  KEYS[2] inflight  KEYS[3] lease  KEYS[4] wake
  Returns {inbox length, inflight length, lease exists, wake flag value or ""}
]]
return {redis.call('LLEN', KEYS[1]), redis.call('LLEN', KEYS[2]), redis.call('EXISTS', KEYS[3]),
  redis.call('GET', KEYS[4]) or ''}
`,
};

export const UNPEND: LuaScript = {
  numberOfKeys: 1,
  lua: `--[[
  Removes a thread from the pending set only if no delivery touched it since the sweeper looked.
  KEYS[1] pending (sorted set)
  ARGV[1] thread key  ARGV[2] the score the sweeper read
  Returns 1 removed; 0 the score changed (a new delivery) or the thread is gone
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) return 1 end
return 0
`,
};
