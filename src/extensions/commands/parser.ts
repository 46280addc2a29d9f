/**
 * The one command parser, for native commands (Telegram `/model@bot x`, Slack `/model`, Discord
 * application commands) and for text after a mention (`@bot /model x`, a bare `stop`). Whether a
 * parsed name is a command is the runner's business: `/etc/hosts is broken` parses as `etc` and,
 * since no such command exists, goes to the agent as a normal message.
 */

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

/** The first whitespace-separated word of `args` and the rest (both trimmed). */
export function splitFirstWord(args: string): { first: string; rest: string } {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(args.trim());
  return m ? { first: m[1] ?? "", rest: (m[2] ?? "").trim() } : { first: "", rest: "" };
}
