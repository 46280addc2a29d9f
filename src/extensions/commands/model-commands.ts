/**
 * `/model [name]` and `/thinking [level]` (alias `/think`): show or change the thread's model and
 * thinking level. Changes persist per thread through the host and reach a running agent at its
 * next LLM call; an invalid argument gets a clear answer and changes nothing. Showing is open to
 * everyone allowed in the thread; changing follows the deployment's settings policy
 * (`ctx.mayChangeSettings()`: admins only in channels and groups by default), the same rule every
 * other route to a model or thinking level goes through.
 */
import { closeModelMatches, hasCredentials, listModels } from "../../agent/llm/models.js";
import { clampThinkingLevel, supportedThinkingLevels } from "../../agent/llm/thinking.js";
import type { Model, Provider, ThinkingLevel } from "../../agent/llm/types.js";
import { THINKING_LEVELS } from "../../agent/llm/types.js";
import { modelRef, resolveModelRef } from "../context.js";
import {
  type CompletionItem,
  type ExtensionAPI,
  type ExtensionCommandContext,
  SettingsRefusedError,
} from "../types.js";
import type { CommandGuard } from "./guard.js";

export interface ModelCommandOptions {
  /** Models `/model` may offer (default: the catalogue, `listModels()`). */
  models?: () => Model[];
  /** API keys besides the environment's, for the "has credentials" filter. */
  getApiKey?: (provider: Provider) => string | undefined;
}

function formatTokens(n: number): string {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${Math.round(n / 1000)}K` : String(n);
}

function isThinkingLevel(value: string): value is ThinkingLevel {
  return (THINKING_LEVELS as readonly string[]).includes(value);
}

/** Where a change applies, said in the answer in channels and groups (DMs: nothing to say). */
function scopeNote(ctx: ExtensionCommandContext): string {
  const scope = ctx.thread.settingsScope;
  if (scope === "channel") return " for new threads in this channel (threads already going on keep theirs)";
  if (scope === "thread") return " for this thread";
  return "";
}

/** Registers `/model` and `/thinking` on `api`. */
export function registerModelCommands(
  api: ExtensionAPI,
  options: ModelCommandOptions,
  guard: CommandGuard,
): void {
  const usable = (): Model[] =>
    (options.models ?? listModels)().filter((m) => hasCredentials(m, options.getApiKey));

  /** Answers a refusal and resolves false when the invoker may not change settings here. */
  async function allowed(ctx: ExtensionCommandContext, what: string): Promise<boolean> {
    if (ctx.mayChangeSettings()) return true;
    await ctx.reply(new SettingsRefusedError(what, ctx.thread).message);
    return false;
  }

  async function listUsable(ctx: ExtensionCommandContext): Promise<void> {
    const current = (await ctx.host.getSettings()).model;
    const models = usable();
    if (models.length === 0) {
      await ctx.reply(
        "No model has credentials here. Set an API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or configure a local model.",
      );
      return;
    }
    const lines = models.map((m) => {
      const ref = modelRef(m);
      const mark = ref === current ? "▶" : "•";
      const tail = ref === current ? " (current)" : "";
      return `${mark} ${ref} — ${m.name}, ${formatTokens(m.contextWindow)} context${tail}`;
    });
    await ctx.reply(["Models you can use (/model <name> to switch):", ...lines].join("\n"));
  }

  async function switchModel(name: string, ctx: ExtensionCommandContext): Promise<void> {
    const model = resolveModelRef(name);
    if (!model) {
      const close = closeModelMatches(name, 5);
      const hint = close.length > 0 ? ` Closest matches: ${close.join(", ")}.` : "";
      await ctx.reply(
        `Unknown model "${name}".${hint} Nothing changed; /model lists the models you can use.`,
      );
      return;
    }
    const ref = modelRef(model);
    if (!hasCredentials(model, options.getApiKey)) {
      await ctx.reply(`${ref} has no API key configured here, so it cannot be used. Nothing changed.`);
      return;
    }
    const before = await ctx.host.getSettings();
    if (!(await ctx.setModel(model))) {
      await ctx.reply(`Could not switch to ${ref}. Nothing changed.`);
      return;
    }
    const lines = [`Model set to ${ref} (${model.name})${scopeNote(ctx)}.`];
    const level = before.thinkingLevel;
    if (level && level !== "off") {
      const clamped = clampThinkingLevel(model, level);
      if (clamped !== level) {
        await ctx.host.setThinkingLevel(clamped);
        lines.push(`Thinking level ${level} is not supported by ${model.name}; it is now ${clamped}.`);
      }
    }
    await ctx.reply(lines.join("\n"));
  }

  api.registerCommand("model", {
    description: "Show the models you can use, or switch this thread's model",
    usage: "[name]",
    handler: guard("change the model", async (name, ctx) => {
      if (name === "") await listUsable(ctx);
      else if (await allowed(ctx, "model")) await switchModel(name, ctx);
    }),
    getArgumentCompletions(prefix: string): CompletionItem[] {
      const needle = prefix.trim().toLowerCase();
      return usable()
        .map((m) => ({ value: modelRef(m), label: m.name }))
        .filter((c) => c.value.toLowerCase().includes(needle) || c.label.toLowerCase().includes(needle))
        .slice(0, 25);
    },
  });

  api.registerCommand("thinking", {
    description: "Show or set this thread's thinking level",
    usage: `[${THINKING_LEVELS.join("|")}]`,
    aliases: ["think"],
    handler: guard("change the thinking level", async (args, ctx) => {
      const arg = args.toLowerCase();
      const model = await ctx.getModel();
      if (arg === "") {
        const level = await ctx.getThinkingLevel();
        const supported = model
          ? ` ${model.name} supports: ${supportedThinkingLevels(model).join(", ")}.`
          : "";
        await ctx.reply(`Thinking level: ${level}.${supported}`);
        return;
      }
      if (!(await allowed(ctx, "thinking level"))) return;
      if (!isThinkingLevel(arg)) {
        await ctx.reply(
          `Unknown thinking level "${arg}". Use one of: ${THINKING_LEVELS.join(", ")}. Nothing changed.`,
        );
        return;
      }
      const effective = await ctx.setThinkingLevel(arg);
      if (effective !== arg) {
        const name = model?.name ?? "this model";
        await ctx.reply(
          `${name} does not support thinking level ${arg}; set to ${effective} instead${scopeNote(ctx)}.`,
        );
      } else {
        await ctx.reply(`Thinking level set to ${effective}${scopeNote(ctx)}.`);
      }
    }),
    getArgumentCompletions(prefix: string): CompletionItem[] {
      const needle = prefix.trim().toLowerCase();
      return THINKING_LEVELS.filter((l) => l.startsWith(needle)).map((l) => ({ value: l }));
    },
  });
}
