-- The budget ledger's keys, which every budget-*.lua script but budget-claim takes first and in this
-- order (BudgetKeys in src/redis-keys.ts): KEYS[1] spent (hash: `usd:<period id>`,
-- `tokens:<period id>` -> whole micro-dollars, tokens)  KEYS[2] reserved (hash, the same fields:
-- the sums of live reservations)  KEYS[3] reservations (hash: call id -> {u = usd, t = tokens,
-- p = {period id, ...}} as JSON)  KEYS[4] their expiries (zset: call id by expiry, ms)  KEYS[5]
-- settled call ids (zset, by when they may be forgotten)  KEYS[6] periods (zset: period id by when
-- its spent counters and stored limits may go)  KEYS[7] limits (hash, the same fields as spent:
-- the limits setLimit stored).
--
-- budget_sweep(now): what a budget step does first. Every reservation whose expiry is at or before
-- `now` is dropped, so the reserved sums hold live reservations only (all of them: a refusal must
-- never count a dead worker's reservation). Settled call ids and at most 100 periods' spent
-- counters and stored limits whose time is up go too (a little per step keeps each step short).
--#include budget-drop
local function budget_sweep(now)
  for _, call in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do budget_drop(call) end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  local old = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now, 'LIMIT', 0, 100)
  for _, id in ipairs(old) do
    redis.call('HDEL', KEYS[1], 'usd:' .. id, 'tokens:' .. id)
    redis.call('HDEL', KEYS[7], 'usd:' .. id, 'tokens:' .. id)
  end
  if #old > 0 then redis.call('ZREM', KEYS[6], unpack(old)) end
end

-- A counter pair {usd, tokens} of one period id in `hash` (0 where absent).
local function budget_read(hash, id)
  local v = redis.call('HMGET', hash, 'usd:' .. id, 'tokens:' .. id)
  return tonumber(v[1]) or 0, tonumber(v[2]) or 0
end

-- The limits {usd, tokens} that apply to one period id: each one setLimit stored (KEYS[7]), else
-- the cap's own `usd`, `tokens` ('' where it does not limit); false where nothing limits.
local function budget_limits(id, usd, tokens)
  local v = redis.call('HMGET', KEYS[7], 'usd:' .. id, 'tokens:' .. id)
  local function pick(stored, own)
    if stored then return tonumber(stored) end
    if own ~= nil and own ~= '' then return tonumber(own) end
    return false
  end
  return pick(v[1], usd), pick(v[2], tokens)
end
