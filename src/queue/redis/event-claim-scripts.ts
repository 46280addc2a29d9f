/**
 * The scripts of an event claim (the runtime's one dedupe point, see event-claims.ts), files in
 * src/queue/lua/. Each touches the one key of its event id, so they run on Redis Cluster. The key
 * holds `<owner>|<expiresAt>` while a process handles the event and `done` once its message is
 * durable. The expiry is the callers' clock (ms), not the key's TTL: a claim whose owner stopped
 * renewing it is taken over, while the key itself lives for the dedupe window.
 */
import { luaScript } from "../lua/load.js";

/** Claims an event id (event-claim.1.lua). */
export const CLAIM_EVENT = luaScript("event-claim");
/** Extends the owner's claim (event-renew.1.lua). */
export const RENEW_EVENT = luaScript("event-renew");
/** Forgets the owner's claim, so a retry is handled (event-release.1.lua). */
export const RELEASE_EVENT = luaScript("event-release");
