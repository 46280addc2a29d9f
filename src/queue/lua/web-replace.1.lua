--[[
  Compare-and-set of one message: writes only when the stored message still has that version.
  KEYS[1] msgs (hash)
  ARGV[1] message id  ARGV[2] the version it was read at  ARGV[3] the new JSON
  Returns 1 written; 0 the message is gone; the stored JSON when it changed meanwhile (read it and
  try again)
]]
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if cjson.decode(current).version ~= tonumber(ARGV[2]) then return current end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
