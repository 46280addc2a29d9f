/**
 * Commands answer failures of the runtime behind them (Redis down, a platform error) with a short
 * reply instead of throwing, so a passing outage does not get the whole commands extension disabled.
 */
import { errorText } from "../../agent/errors.js";
import type { ExtensionCommandContext } from "../types.js";

export type CommandHandler = (args: string, ctx: ExtensionCommandContext) => Promise<void>;

/** Wraps a handler: a rejection becomes the reply "Could not <what>: <error>" and a warning. */
export type CommandGuard = (what: string, run: CommandHandler) => CommandHandler;

export const guardCommand: CommandGuard = (what, run) => async (args, ctx) => {
  try {
    await run(args, ctx);
  } catch (e) {
    ctx.logger.warn({ err: e, threadKey: ctx.thread.threadKey }, `command failed: ${what}`);
    await ctx.reply(`Could not ${what}: ${errorText(e)}`).catch(() => {});
  }
};
