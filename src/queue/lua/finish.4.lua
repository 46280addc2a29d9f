--[[
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
--#include settle-items
--#include take-items
--#include with-control
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
