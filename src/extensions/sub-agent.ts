/**
 * `spawn_sub_agent`, as an extension: runs a task in a fresh agent with its own context (none of
 * the thread's history), the parent's model unless another is named, and the parent's tools
 * (except itself) behind the same tool gates, so approval still applies. Naming another model is
 * a settings change like `/model`: the channel's settings policy decides for the person whose
 * message started the run. Its progress appears as updates of the tool call; aborting the
 * parent's run aborts it.
 */
import { Type } from "@sinclair/typebox";
import { Agent, type AgentOptions } from "../agent/agent.js";
import { hasCredentials } from "../agent/llm/models.js";
import type { AssistantMessage, Provider } from "../agent/llm/types.js";
import { convertToLlm } from "../agent/session/messages.js";
import type { AgentEvent, AgentToolResult, AgentToolUpdateCallback, StreamFn } from "../agent/types.js";
import { modelRef, resolveModelRef } from "./context.js";
import type { ExtensionContext, ExtensionFactory } from "./types.js";

export const SUB_AGENT_TOOL = "spawn_sub_agent";

export interface SubAgentOptions {
  /** How sub-agents stream (default: the provider registry's `streamSimple`). */
  streamFn?: StreamFn;
  /**
   * How the sub-agents of the thread `ctx` is bound to stream (its budget counts them); wins over
   * `streamFn`.
   */
  streamFor?: (ctx: ExtensionContext) => StreamFn;
  getApiKey?: AgentOptions["getApiKey"];
  /** API keys for the "has credentials" check of a named model (besides the environment). */
  getKey?: (provider: Provider) => string | undefined;
  /** System prompt of sub-agents; `{task}` is replaced by the task. */
  systemPrompt?: string;
  /** `inherit` (default): the parent's tools except this one; `none`: no tools. */
  tools?: "inherit" | "none";
  /** Most model calls one sub-agent may make before it is stopped. Default 20. */
  maxTurns?: number;
}

export interface SubAgentDetails {
  task: string;
  model: string;
  turns: number;
  toolCalls: number;
  /** Summed over the sub-agent's replies; the parent's thread totals do not include it. */
  usage: { input: number; output: number; cost: number };
}

const DEFAULT_PROMPT =
  "You are a sub-agent working on one task for another agent. Work on it with the tools you have, " +
  "then answer with the result only; the other agent reads your final message.\n\nTask: {task}";

const parameters = Type.Object({
  task: Type.String({
    description: "What the sub-agent should do, with all the context it needs",
    minLength: 1,
  }),
  model: Type.Optional(Type.String({ description: "Model (provider/id) to use instead of yours" })),
});

function lastAssistant(messages: readonly unknown[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string };
    if (m.role === "assistant") return m as AssistantMessage;
  }
  return undefined;
}

function textOf(message: AssistantMessage | undefined): string {
  return (message?.content ?? [])
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("")
    .trim();
}

/** The sub-agent extension; register it under the name `sub-agent`. */
export function createSubAgentExtension(options: SubAgentOptions = {}): ExtensionFactory {
  const maxTurns = options.maxTurns ?? 20;
  return (api) => {
    api.registerTool({
      name: SUB_AGENT_TOOL,
      label: "Sub-agent",
      description:
        "Hand a self-contained task to a sub-agent with a fresh context (it does not see this conversation). " +
        "Returns its final answer.",
      parameters,
      async execute(_id, params, signal, onUpdate, ctx): Promise<AgentToolResult<SubAgentDetails>> {
        const own = await ctx.getModel();
        let model = own;
        if (params.model !== undefined) {
          model = resolveModelRef(params.model);
          if (!model) throw new Error(`Unknown model "${params.model}"; leave model out to use your own.`);
          const other = !own || modelRef(model) !== modelRef(own);
          if (other && !ctx.mayChangeSettings()) {
            const who = ctx.thread.user?.name ?? ctx.thread.user?.id ?? "the person who started this run";
            throw new Error(
              `${modelRef(model)} was not used: the channel's settings policy does not let ${who} choose ` +
                "models here (only admins may). Leave model out to use your own.",
            );
          }
          if (!hasCredentials(model, options.getKey))
            throw new Error(`${modelRef(model)} has no API key configured here.`);
        }
        if (!model) throw new Error("No model is set for this thread, so no sub-agent can run.");
        const tools = options.tools === "none" ? [] : ctx.getTools().filter((t) => t.name !== SUB_AGENT_TOOL);
        const hooks = ctx.toolHooks();
        const agentOptions: AgentOptions = {
          initialState: {
            model,
            thinkingLevel: await ctx.getThinkingLevel(),
            tools,
            systemPrompt: (options.systemPrompt ?? DEFAULT_PROMPT).replaceAll("{task}", params.task),
          },
          convertToLlm,
          beforeToolCall: hooks.beforeToolCall,
          afterToolCall: hooks.afterToolCall,
        };
        const streamFn = options.streamFor?.(ctx) ?? options.streamFn;
        if (streamFn) agentOptions.streamFn = streamFn;
        if (options.getApiKey) agentOptions.getApiKey = options.getApiKey;
        const sub = new Agent(agentOptions);

        const details: SubAgentDetails = {
          task: params.task,
          model: modelRef(model),
          turns: 0,
          toolCalls: 0,
          usage: { input: 0, output: 0, cost: 0 },
        };
        const progress: string[] = [];
        let stoppedForTurns = false;
        const report = (update: AgentToolUpdateCallback<SubAgentDetails> | undefined) =>
          update?.({
            content: [{ type: "text", text: progress.slice(-20).join("\n") }],
            details: { ...details },
          });
        sub.subscribe((event: AgentEvent) => {
          if (event.type === "tool_execution_start") {
            details.toolCalls++;
            progress.push(`🔧 ${event.toolName} ${JSON.stringify(event.args).slice(0, 120)}`);
            report(onUpdate);
          } else if (event.type === "message_end" && event.message.role === "assistant") {
            const m = event.message;
            details.turns++;
            details.usage.input += m.usage.input;
            details.usage.output += m.usage.output;
            details.usage.cost += m.usage.cost.total;
            const text = textOf(m);
            if (text) progress.push(`💬 ${text.slice(0, 200)}`);
            report(onUpdate);
            if (details.turns >= maxTurns && m.stopReason === "toolUse") {
              stoppedForTurns = true;
              sub.abort();
            }
          }
        });

        const onAbort = () => sub.abort();
        if (signal?.aborted) throw new Error("Sub-agent not started: the run was stopped.");
        signal?.addEventListener("abort", onAbort, { once: true });
        try {
          await sub.prompt(params.task);
        } finally {
          signal?.removeEventListener("abort", onAbort);
        }
        const final = lastAssistant(sub.state.messages);
        if (stoppedForTurns) {
          throw new Error(
            `Sub-agent stopped after ${maxTurns} model calls without finishing. Last progress:\n${progress.slice(-5).join("\n")}`,
          );
        }
        if (signal?.aborted || final?.stopReason === "aborted")
          throw new Error("Sub-agent stopped: the run was stopped.");
        if (!final || final.stopReason === "error") {
          throw new Error(`Sub-agent failed: ${final?.errorMessage ?? "it produced no answer"}`);
        }
        return {
          content: [{ type: "text", text: textOf(final) || "(the sub-agent gave no text answer)" }],
          details,
        };
      },
    });
  };
}
