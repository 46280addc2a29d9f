/**
 * Commands typed at a channel's top level (a Slack slash command, a Discord application command
 * outside a thread, a Telegram command in a group that replies to nothing). No conversation lives
 * there: each conversation in a channel has a thread of its own. Settings commands set the
 * channel's defaults for new threads (model-commands.ts); the commands that act on one
 * conversation's run or session (`/new`, `/compact`, `/stop`, `/steer`, `/followup`) change
 * nothing there and answer how to use them in a thread, and `/status` shows the channel's defaults.
 */
import type { ExtensionCommandContext } from "../types.js";

/** Whether `ctx` is a command typed at a channel's top level (never in DMs). */
export function atChannelTopLevel(ctx: ExtensionCommandContext): boolean {
  return ctx.thread.settingsScope === "channel";
}

/** How to reach one conversation instead: the same command after a mention, in its thread. */
export function inAThread(command: string): string {
  return `To use it on a conversation, mention me in that conversation's thread followed by ${command}.`;
}

/** The answer of a conversation command typed at a channel's top level: nothing happened, and why. */
export function notAtTopLevel(command: string, outcome: string, acts: string): string {
  return `${outcome}: ${command} ${acts}, and the channel's top level is not a conversation (each conversation here has its own thread). ${inAThread(command)}`;
}
