-- with_control(t, control): appends the thread's control state to a take's reply, after its
-- status: {status, abortAt, ver, stops, rest...}. Read after the items moved, in the same step, so
-- the holder needs no read of its own.
local function with_control(t, control)
  local c = redis.call('HMGET', control, 'abortAt', 'ver', 'stops')
  local out = {t[1], c[1] or '0', c[2] or '0', c[3] or '0'}
  for i = 2, #t do out[#out + 1] = t[i] end
  return out
end
