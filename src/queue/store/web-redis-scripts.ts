/**
 * Lua steps of the web chat's Redis store. Each touches the keys of one conversation only, which
 * share the hash tag `{web:<id>}` (the conversation's thread key), so each runs in one slot, also on
 * Redis Cluster. Keys (`WebChatKeys` in src/redis-keys.ts):
 *
 * | key | type | holds |
 * |---|---|---|
 * | `<prefix>{web:<id>}:chat` | hash | `id`, `title`, `kind`, `createdAt`, `updatedAt`, `titled` (0/1), `seq` (last message number) |
 * | `<prefix>{web:<id>}:chat:msgs` | hash | message id → the message as JSON |
 * | `<prefix>{web:<id>}:chat:order` | list | message ids, oldest first |
 * | `<prefix>{web:<id>}:chat:clients` | hash | client request id → `{messageId, delivered}` (expires a day after the last send) |
 */
import type { LuaScript } from "../redis/run-script.js";

/**
 * CREATE — KEYS[1] chat. ARGV: id, title, kind, createdAt, titled.
 * Returns `[created (0|1), field, value, …]`: the conversation's hash after the step; an existing
 * conversation is left as it is.
 */
export const CREATE: LuaScript = {
  name: "web-create",
  lua: `
local chat = KEYS[1]
if redis.call('HEXISTS', chat, 'id') == 1 then
  return {0, unpack(redis.call('HGETALL', chat))}
end
redis.call('HSET', chat, 'id', ARGV[1], 'title', ARGV[2], 'kind', ARGV[3],
  'createdAt', ARGV[4], 'updatedAt', ARGV[4], 'titled', ARGV[5], 'seq', 0)
return {1, unpack(redis.call('HGETALL', chat))}
`,
};

/**
 * NEXT_ID — KEYS[1] chat. Returns the next message number, or nil when there is no conversation
 * (so a message is never numbered into a conversation that was removed).
 */
export const NEXT_ID: LuaScript = {
  name: "web-next-id",
  lua: `
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return nil end
return redis.call('HINCRBY', KEYS[1], 'seq', 1)
`,
};

/**
 * ADD — KEYS[1] chat, KEYS[2] msgs, KEYS[3] order. ARGV: message id, message JSON, now, title from
 * this message ("" when it names nothing), max messages.
 * Appends the message, removes the oldest beyond the limit, moves `updatedAt` forward and names an
 * untitled conversation. Returns nil when the conversation is gone, else
 * `[{removed ids…}, field, value, …]` with the conversation's hash after the step.
 */
export const ADD: LuaScript = {
  name: "web-add",
  lua: `
local chat, msgs, order = KEYS[1], KEYS[2], KEYS[3]
if redis.call('HEXISTS', chat, 'id') == 0 then return nil end
redis.call('HSET', msgs, ARGV[1], ARGV[2])
redis.call('RPUSH', order, ARGV[1])
local removed = {}
local max = tonumber(ARGV[5])
while redis.call('LLEN', order) > max do
  local old = redis.call('LPOP', order)
  redis.call('HDEL', msgs, old)
  removed[#removed + 1] = old
end
local now = tonumber(ARGV[3])
if now > tonumber(redis.call('HGET', chat, 'updatedAt') or '0') then
  redis.call('HSET', chat, 'updatedAt', ARGV[3])
end
if ARGV[4] ~= '' and redis.call('HGET', chat, 'titled') ~= '1' then
  redis.call('HSET', chat, 'title', ARGV[4], 'titled', '1')
end
return {removed, unpack(redis.call('HGETALL', chat))}
`,
};

/**
 * REPLACE — KEYS[1] msgs. ARGV: message id, the version it was read at, the new JSON.
 * Compare-and-set: writes only when the stored message still has that version. Returns 1 (written),
 * 0 (the message is gone) or the stored JSON (it changed meanwhile: read it and try again).
 */
export const REPLACE: LuaScript = {
  name: "web-replace",
  lua: `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if cjson.decode(current).version ~= tonumber(ARGV[2]) then return current end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`,
};

/** REMOVE — KEYS[1] msgs, KEYS[2] order. ARGV: message id. Returns 1 when it existed. */
export const REMOVE: LuaScript = {
  name: "web-remove",
  lua: `
local n = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 1, ARGV[1])
return n
`,
};

/**
 * READ — KEYS[1] chat, KEYS[2] order, KEYS[3] msgs. Returns nil when there is no conversation, else
 * the messages' JSON, oldest first (at one instant).
 */
export const READ: LuaScript = {
  name: "web-read",
  lua: `
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return nil end
local ids = redis.call('LRANGE', KEYS[2], 0, -1)
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[3], unpack(ids))
`,
};
