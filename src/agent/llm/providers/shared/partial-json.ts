/**
 * Tool-call arguments that arrive as JSON fragments.
 *
 * Usage: keep the raw text per tool call, append each fragment, and call
 * `parseStreamingJson(raw)` after every append so `toolCall.arguments` is always an object:
 * `{"path": "/tm` → `{ path: "/tm" }`. At the end of the call parse once more; the result is the
 * final arguments (an empty object when the model sent nothing or something that is not a JSON
 * object, so a broken call still reaches tool validation as data instead of throwing).
 */
import { Allow, parse } from "partial-json";

/** The object a (possibly incomplete) JSON text describes so far; `{}` when it is not an object yet. */
export function parseStreamingJson(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (trimmed === "") return {};
  try {
    const complete: unknown = JSON.parse(trimmed);
    return isPlainObject(complete) ? complete : {};
  } catch {
    // Not complete yet: fall through to the partial parser.
  }
  try {
    const partial: unknown = parse(trimmed, Allow.ALL);
    return isPlainObject(partial) ? partial : {};
  } catch {
    return {};
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
