/**
 * The one command parser, for native commands (Telegram `/model@bot x`, Slack `/model`, Discord
 * application commands) and for text after a mention (`@bot /model x`, a bare `stop`). Whether a
 * parsed name is a command is the runner's business: `/etc/hosts is broken` parses as `etc` and,
 * since no such command exists, goes to the agent as a normal message. The runtime's shortcuts (a
 * bare `stop`, `/steer …` and friends on messages that reach it directly) use this parser too.
 */
import type { DeliveryMode } from "../types.js";

export interface ParsedCommand {
  /** Lower case, without slash or `@bot` suffix. */
  name: string;
  /** Everything after the name, trimmed; newlines inside are kept. */
  args: string;
}

/** A leading mention token (`@bot`, Slack `<@U123>`, Discord `<@123>` / `<@!123>`) that adapters left in place. */
const LEADING_MENTION = /^(?:<@!?[A-Za-z0-9]+>|@[\w.-]+)\s+/;
const SLASH_COMMAND = /^\/([A-Za-z][A-Za-z0-9_-]{0,31})(?:@[\w.-]+)?(?:\s+([\s\S]*))?$/;
const BARE_STOP = /^stop[.!]*$/i;

/**
 * The command in a chat message's text, or undefined when the text is not a command. Recognises
 * `/name args` (also `/name@bot args`), optionally after one leading mention, and a bare `stop`
 * (any case, trailing `.`/`!`), which is `/stop`.
 */
export function parseCommandText(text: string): ParsedCommand | undefined {
  const trimmed = text.trim().replace(LEADING_MENTION, "");
  if (BARE_STOP.test(trimmed)) return { name: "stop", args: "" };
  const m = SLASH_COMMAND.exec(trimmed);
  if (!m) return undefined;
  return { name: (m[1] ?? "").toLowerCase(), args: (m[2] ?? "").trim() };
}

/**
 * Normalises a command a platform delivered natively (`InboundCommand.name`/`args`): lower case,
 * no leading slash, no `@bot` suffix.
 */
export function parseNativeCommand(command: { name: string; args: string }): ParsedCommand {
  const name = command.name.trim().replace(/^\//, "").replace(/@.*$/, "").toLowerCase();
  return { name, args: command.args.trim() };
}

/** The per-message delivery overrides (`/steer <text>`, `/followup <text>`, …) and their modes. */
const MODE_COMMANDS: ReadonlyMap<string, DeliveryMode> = new Map([
  ["steer", "steer"],
  ["followup", "followUp"],
  ["follow-up", "followUp"],
  ["collect", "collect"],
  ["interrupt", "interrupt"],
]);

/**
 * True for a stop request: `/stop` (also `/stop@bot`) or a bare `stop` (any case, trailing `.`/`!`),
 * optionally after a leading mention, with nothing after it. `/stop now` is the `/stop` command
 * with an argument, which the command runner handles; the runtime's shortcut takes only the bare form.
 */
export function isStopCommand(text: string): boolean {
  const command = parseCommandText(text);
  return command?.name === "stop" && command.args === "";
}

/**
 * Splits a per-message override off a chat message: `/steer <text>`, `/followup <text>` (also
 * `/follow-up`), `/collect <text>` and `/interrupt <text>` choose how that one message is delivered.
 * Returns the mode (undefined when the text is no override) and the text to deliver.
 */
export function parseModeOverride(text: string): { mode: DeliveryMode | undefined; text: string } {
  const command = parseCommandText(text);
  const mode = command ? MODE_COMMANDS.get(command.name) : undefined;
  return mode && command ? { mode, text: command.args } : { mode: undefined, text };
}
