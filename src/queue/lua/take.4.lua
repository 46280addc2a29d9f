--[[
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
--#include take-items
--#include with-control
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {-1} end
return with_control(take_items(KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])), KEYS[4])
