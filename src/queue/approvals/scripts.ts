/** The Lua step that settles an approval request (one thread's keys, one hash slot). */
import { luaScript } from "../lua/load.js";

/** Settles a pending approval request; the first decision wins (approval-decide.3.lua). */
export const DECIDE = luaScript("approval-decide");
