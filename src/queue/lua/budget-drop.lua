-- budget_drop(call): removes a reservation (budget-sweep.lua lists the ledger's keys; this part
-- uses the reserved sums KEYS[2], the reservations KEYS[3] and their expiries KEYS[4]).

-- Subtracts n from a counter, deleting it at zero so that the hash holds live sums only.
local function budget_take(hash, field, n)
  if n == 0 then return end
  if redis.call('HINCRBY', hash, field, -n) <= 0 then redis.call('HDEL', hash, field) end
end

-- Removes a reservation and its amount from the reserved sums; returns it (nil when there is none).
local function budget_drop(call)
  local raw = redis.call('HGET', KEYS[3], call)
  if not raw then return nil end
  local r = cjson.decode(raw)
  for _, id in ipairs(r.p) do
    budget_take(KEYS[2], 'usd:' .. id, r.u)
    budget_take(KEYS[2], 'tokens:' .. id, r.t)
  end
  redis.call('HDEL', KEYS[3], call)
  redis.call('ZREM', KEYS[4], call)
  return r
end
