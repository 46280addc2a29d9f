/**
 * `/status` (thread key, model, thinking, context, usage, queue, run, where the session is stored),
 * `/tools` (the thread's tools, by where they come from) and `/help` (every enabled command, each
 * said once).
 */
import { formatUsd } from "../../agent/llm/usage.js";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "../types.js";
import { atChannelTopLevel, inAThread } from "./channel-top.js";
import type { CommandGuard } from "./guard.js";

const n = (value: number) => value.toLocaleString("en-US");

/**
 * `/status` at a channel's top level: the defaults new threads there start with (set by `/model`
 * and `/thinking` typed at the top level), and how to see one conversation's status.
 */
async function channelDefaultLines(ctx: ExtensionCommandContext): Promise<string[]> {
  const [settings, model, level] = await Promise.all([
    ctx.host.getSettings(),
    ctx.getModel(),
    ctx.getThinkingLevel(),
  ]);
  const name = model
    ? `${model.provider}/${model.id} (${model.name})`
    : (settings.model ?? "none with credentials");
  return [
    "This channel's defaults for new threads (threads already going on keep theirs):",
    `Model: ${name}`,
    `Thinking: ${level}`,
    `Change them here with /model and /thinking. ${inAThread("/status")}`,
  ];
}

/** The lines of `/tools` for a thread: one per source of tools (built-ins, extensions, each MCP server). */
export type ToolLines = (ctx: ExtensionContext) => string[] | Promise<string[]>;

/**
 * Registers `/status`, `/tools` and `/help` on `api`; `statusLines` adds lines to `/status` (the
 * tool sandbox), `toolLines` gives `/tools` its lines (without it `/tools` is not registered).
 */
export function registerInfoCommands(
  api: ExtensionAPI,
  guard: CommandGuard,
  statusLines: () => string[] = () => [],
  toolLines?: ToolLines,
): void {
  if (toolLines) {
    api.registerCommand("tools", {
      description: "List the tools the agent has in this thread, by where they come from",
      handler: guard("list the tools", async (_args, ctx) => {
        const lines = await toolLines(ctx);
        await ctx.reply(
          lines.length > 0 ? ["Tools here:", ...lines].join("\n") : "The agent has no tools here.",
        );
      }),
    });
  }
  api.registerCommand("status", {
    description:
      "Show this thread's key, model, thinking level, context use, cost and where its session is stored",
    handler: guard("read the status", async (_args, ctx) => {
      if (atChannelTopLevel(ctx)) {
        // How tools run holds for every thread here, so the channel's answer says it too.
        const lines = await channelDefaultLines(ctx);
        await ctx.reply([...lines.slice(0, -1), ...statusLines(), ...lines.slice(-1)].join("\n"));
        return;
      }
      const [status, settings, model, level] = await Promise.all([
        ctx.host.status(),
        ctx.host.getSettings(),
        ctx.getModel(),
        ctx.getThinkingLevel(),
      ]);
      const modelLine = model
        ? `Model: ${model.provider}/${model.id} (${model.name})`
        : `Model: ${settings.model ?? "default"}`;
      let contextLine = "Context: unknown until the first reply";
      if (status.contextTokens !== undefined && model) {
        const pct = Math.round((status.contextTokens / model.contextWindow) * 100);
        contextLine = `Context: ${n(status.contextTokens)} / ${n(model.contextWindow)} tokens (${pct}%)`;
      } else if (status.contextTokens !== undefined) {
        contextLine = `Context: ${n(status.contextTokens)} tokens`;
      }
      const u = status.usage;
      const cache =
        u.cacheRead + u.cacheWrite > 0
          ? ` · ${n(u.cacheRead)} cache read · ${n(u.cacheWrite)} cache write`
          : "";
      const lines = [
        `Thread: ${ctx.thread.threadKey}`,
        modelLine,
        `Thinking: ${level}`,
        contextLine,
        `Thread usage: ${n(u.input)} in · ${n(u.output)} out${cache} · ${formatUsd(u.cost)}`,
        `Queue mode: ${status.queueMode}${status.inboxDepth > 0 ? ` · ${status.inboxDepth} waiting` : ""}`,
        `Run: ${status.running ? "active" : "idle"}`,
        ...statusLines(),
      ];
      const session = status.session;
      if (session) lines.push(`Session: ${session.id}${session.location ? ` (${session.location})` : ""}`);
      await ctx.reply(lines.join("\n"));
    }),
  });

  api.registerCommand("help", {
    description: "List the commands",
    handler: guard("list the commands", async (_args, ctx) => {
      const lines = api.getCommands().map((c) => {
        const usage = c.usage ? ` ${c.usage}` : "";
        const aliases = c.aliases.length > 0 ? ` (also ${c.aliases.map((a) => `/${a}`).join(", ")})` : "";
        return `/${c.name}${usage} — ${c.description}${aliases}`;
      });
      await ctx.reply(["Commands:", ...lines].join("\n"));
    }),
  });
}
