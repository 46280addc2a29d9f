/**
 * Lua steps of the web chat's Redis store (files web-*.lua in src/queue/lua/). Each touches the keys
 * of one conversation only, which share the hash tag `{web:<id>}` (the conversation's thread key),
 * so each runs in one slot, also on Redis Cluster. Keys (`WebChatKeys` in src/redis-keys.ts):
 *
 * | key | type | holds |
 * |---|---|---|
 * | `<prefix>{web:<id>}:chat` | hash | `id`, `title`, `kind`, `createdAt`, `updatedAt`, `titled` (0/1), `seq` (last message number) |
 * | `<prefix>{web:<id>}:chat:msgs` | hash | message id → the message as JSON |
 * | `<prefix>{web:<id>}:chat:order` | list | message ids, oldest first |
 * | `<prefix>{web:<id>}:chat:clients` | hash | client request id → `{messageId, delivered}` (expires a day after the last send) |
 */
import { luaScript } from "../lua/load.js";

/** Creates a conversation unless it exists. */
export const CREATE = luaScript("web-create");
/** The next message number, or nil when the conversation is gone. */
export const NEXT_ID = luaScript("web-next-id");
/** Appends a message, trims the oldest, moves `updatedAt` and names an untitled conversation. */
export const ADD = luaScript("web-add");
/** Compare-and-set of one message by its version. */
export const REPLACE = luaScript("web-replace");
/** Removes one message. */
export const REMOVE = luaScript("web-remove");
/** A conversation's messages at one instant. */
export const READ = luaScript("web-read");
