/**
 * The scripts of an event claim (the runtime's one dedupe point, see event-claims.ts). Each touches
 * the one key of its event id, so they run on Redis Cluster. The key holds `<owner>|<expiresAt>`
 * while a process handles the event and `done` once its message is durable. The expiry is the
 * callers' clock (ms), not the key's TTL: a claim whose owner stopped renewing it is taken over,
 * while the key itself lives for the dedupe window.
 */
import type { LuaScript } from "./run-script.js";

const PARSE = `
local function parse(v)
  local bar = string.find(v, '|', 1, true)
  if not bar then return nil, 0 end
  return string.sub(v, 1, bar - 1), tonumber(string.sub(v, bar + 1)) or 0
end
`;

export const CLAIM_EVENT: LuaScript = {
  numberOfKeys: 1,
  lua:
    `--[[
  Claims an event id.
  KEYS[1] the event's claim   ARGV[1] owner   ARGV[2] now (ms)   ARGV[3] claim ttl (ms)
  ARGV[4] how long the key is kept (ms, the dedupe window)
  Returns {'claimed'}  {'done'}  {'held', remaining ms}
]]` +
    PARSE +
    `
local v = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[2])
if v == 'done' then return {'done'} end
if v then
  local _, expires = parse(v)
  if expires > now then return {'held', expires - now} end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (now + tonumber(ARGV[3])), 'PX', ARGV[4])
return {'claimed'}
`,
};

export const RENEW_EVENT: LuaScript = {
  numberOfKeys: 1,
  lua:
    `--[[
  Extends the owner's claim.
  KEYS[1] the event's claim   ARGV[1] owner   ARGV[2] now (ms)   ARGV[3] claim ttl (ms)
  ARGV[4] how long the key is kept (ms)
  Returns 1 renewed; 0 the owner no longer holds it (done, released or taken over)
]]` +
    PARSE +
    `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local owner = parse(v)
if owner ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (tonumber(ARGV[2]) + tonumber(ARGV[3])), 'PX', ARGV[4])
return 1
`,
};

export const RELEASE_EVENT: LuaScript = {
  numberOfKeys: 1,
  lua:
    `--[[
  Forgets the owner's claim (its handling failed), so a retry is handled.
  KEYS[1] the event's claim   ARGV[1] owner
  Returns 1 released; 0 someone else's claim or done (left alone)
]]` +
    PARSE +
    `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local owner = parse(v)
if owner ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`,
};
