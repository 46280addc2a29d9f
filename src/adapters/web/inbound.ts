/**
 * What a line typed into the web chat means: a command (`/model gpt-5`), delivered as an
 * `InboundCommand` like other platforms' native commands, or a message for the bot. In a group
 * conversation a message reaches the bot only when it mentions `@<bot name>`; the mention is removed
 * from the delivered text.
 */
import type { ConversationKind } from "./model.js";

export type TypedLine =
  | { kind: "command"; name: string; args: string }
  | { kind: "message"; text: string; mentioned: boolean };

/** `/name args`: the same names Telegram accepts; `/etc/hosts …` is not a command. */
const COMMAND = /^\/([A-Za-z0-9_]{1,32})(?:\s+([\s\S]*))?$/;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Interprets `text` typed by the user into a conversation of `kind`. */
export function interpretLine(text: string, kind: ConversationKind, botName: string): TypedLine {
  const trimmed = text.trim();
  const command = COMMAND.exec(trimmed);
  if (command)
    return { kind: "command", name: (command[1] ?? "").toLowerCase(), args: (command[2] ?? "").trim() };
  const pattern = `(^|[^\\w@])@${escapeRegExp(botName)}(?![\\w-])`;
  const mentioned = new RegExp(pattern, "i").test(trimmed);
  const stripped = mentioned
    ? trimmed
        .replace(new RegExp(pattern, "gi"), "$1")
        .replace(/[ \t]{2,}/g, " ")
        .replace(/^[\s,:]+/, "")
        .trim()
    : trimmed;
  if (kind === "direct") return { kind: "message", text: stripped || trimmed, mentioned: true };
  return { kind: "message", text: stripped, mentioned };
}
