/**
 * The names MCP tools get in front of the model: `<server>_<tool>`, within what every provider
 * accepts (`^[a-zA-Z0-9_-]{1,64}$`), so two servers' `search` tools never collide and a long or
 * exotic tool name still gets a valid, stable name.
 */
import { createHash } from "node:crypto";

const MAX_NAME = 64;

/**
 * The model-facing name of `tool` of `server`: characters outside `[a-zA-Z0-9_-]` become `_`;
 * a name that had to change that way, or is longer than 64, ends in 8 hex characters of a hash
 * of the original, so distinct tools keep distinct names.
 */
export function modelToolName(server: string, tool: string): string {
  const raw = `${server}_${tool}`;
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (clean === raw && clean.length <= MAX_NAME) return clean;
  const hash = createHash("sha256").update(raw).digest("hex").slice(0, 8);
  return `${clean.slice(0, MAX_NAME - 9)}_${hash}`;
}
