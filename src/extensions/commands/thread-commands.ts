/**
 * Commands that act on the thread's run and session: `/stop`, `/new`, `/compact [instructions]`,
 * `/steer <text>`, `/followup <text>`.
 */
import type { ControlOutcome, ExtensionAPI } from "../types.js";
import { atChannelTopLevel, notAtTopLevel } from "./channel-top.js";
import type { CommandGuard } from "./guard.js";

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function outcomeLines(outcome: ControlOutcome): string[] {
  const lines: string[] = [];
  if (outcome.discarded > 0) lines.push(`Discarded ${plural(outcome.discarded, "queued message")}.`);
  lines.push(...(outcome.notes ?? []));
  return lines;
}

/** Registers the run and session commands on `api`. */
export function registerThreadCommands(api: ExtensionAPI, guard: CommandGuard): void {
  api.registerCommand("stop", {
    description: "Stop the agent's current run (also a bare `stop`)",
    handler: guard("stop the run", async (_args, ctx) => {
      // Stopping every conversation of a channel at once is not what a slash command typed there
      // should do by surprise; the answer says how to stop the one meant.
      if (atChannelTopLevel(ctx)) {
        await ctx.reply(
          "Nothing stopped: /stop at the channel's top level does not stop the conversations in this channel (each has its own thread). To stop one, mention me in its thread followed by “stop” (or /stop).",
        );
        return;
      }
      const outcome = await ctx.host.stop();
      const head = outcome.wasRunning ? "⏹️ Stopped." : "Nothing was running.";
      await ctx.reply([head, ...outcomeLines(outcome)].join("\n"));
    }),
  });

  api.registerCommand("new", {
    description: "Start a fresh session in this thread (the old one is kept)",
    handler: guard("start a new session", async (_args, ctx) => {
      if (atChannelTopLevel(ctx)) {
        await ctx.reply(
          notAtTopLevel("/new", "Nothing changed", "starts a fresh session in the thread it is typed in"),
        );
        return;
      }
      const outcome = await ctx.host.newSession();
      // The thread's runtime confirms once the new session exists ("Started a new session (…)."), so
      // a second confirmation here would say the same twice; only what that notice cannot know.
      const extra = [
        ...(outcome.wasRunning ? ["⏹️ Stopped the run in progress."] : []),
        ...outcomeLines(outcome),
      ];
      if (extra.length > 0) await ctx.reply(extra.join("\n"));
    }),
  });

  api.registerCommand("compact", {
    description: "Summarise older messages to free context",
    usage: "[instructions]",
    handler: guard("compact the session", async (args, ctx) => {
      if (atChannelTopLevel(ctx)) {
        await ctx.reply(
          notAtTopLevel("/compact", "Nothing compacted", "summarises the thread it is typed in"),
        );
        return;
      }
      const outcome = await ctx.host.compact(args === "" ? undefined : args);
      if (outcome.queued) {
        await ctx.reply("Compacting the conversation; a note here will say how much context it freed.");
        return;
      }
      if (!outcome.compacted) {
        await ctx.reply(`Nothing compacted: ${outcome.reason ?? "there is not enough history yet"}.`);
        return;
      }
      const sizes =
        outcome.tokensBefore !== undefined && outcome.tokensAfter !== undefined
          ? ` Context: ${outcome.tokensBefore.toLocaleString("en-US")} → ${outcome.tokensAfter.toLocaleString("en-US")} tokens.`
          : "";
      await ctx.reply(`Compacted the session.${sizes}`);
    }),
  });

  for (const [name, mode, description] of [
    ["steer", "steer", "Redirect the current run with this message"],
    ["followup", "followUp", "Queue this message for after the current run"],
  ] as const) {
    api.registerCommand(name, {
      description,
      usage: "<text>",
      aliases: name === "followup" ? ["follow-up"] : [],
      handler: guard(`queue the message`, async (args, ctx) => {
        if (args === "") {
          await ctx.reply(`Usage: /${name} <text>. Nothing was sent.`);
          return;
        }
        if (atChannelTopLevel(ctx)) {
          await ctx.reply(
            notAtTopLevel(`/${name}`, "Nothing was sent", "reaches the run of the thread it is typed in"),
          );
          return;
        }
        await ctx.host.deliver(args, mode);
        await ctx.reply(
          mode === "steer"
            ? "➡️ Steering the agent with your message."
            : "⏭️ Queued for after the current run.",
        );
      }),
    });
  }
}
