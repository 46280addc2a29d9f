/**
 * The extensions of one thread: turns the runner's registrations into the engine's hooks
 * (`beforeToolCall`, `afterToolCall`, `transformContext`), the thread's tool list, the
 * `before_agent_start` step of a run, agent and session events, commands and reactions.
 *
 * Failure policy: a handler that throws disables its extension (reported); a throwing `tool_call`
 * handler also blocks that call (fail closed). Nothing here throws to the caller for an extension's
 * fault.
 */
import type { Agent } from "../agent/agent.js";
import { errorText } from "../agent/errors.js";
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentMessage,
  AgentOptions,
  AgentTool,
  BeforeToolCallContext,
  BeforeToolCallResult,
} from "../agent/index.js";
import type { CustomMessage } from "../agent/session/messages.js";
import { createContext, toCustomMessage } from "./context.js";
import { withStopEvents } from "./host-view.js";
import type { ExtensionRegistry, LoadedExtension } from "./registry.js";
import { applyWrappers, bindTool, type ToolBindingEnv } from "./thread-tools.js";
import type {
  CompletionItem,
  ExtensionCommandContext,
  ExtensionContext,
  ExtensionEventType,
  ExtensionHandler,
  ExtensionHost,
  ExtensionTool,
  ReactionEvent,
  SessionEvent,
  SessionEventResult,
  ThreadStopEvent,
  ToolDefinition,
} from "./types.js";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ThreadExtensionsOptions {
  /**
   * Names of the tools this thread gets (from the channel's config). Undefined: every tool. Names
   * that match no tool are logged once per binding.
   */
  activeTools?: readonly string[];
}

/** The agent hooks a binding supplies; spread them into `new Agent({...})`. */
export type ExtensionAgentHooks = Required<
  Pick<AgentOptions, "beforeToolCall" | "afterToolCall" | "transformContext">
>;

/** Per-thread extension view. Create it with `ExtensionRunner.bind(host)`. */
export class ThreadExtensions {
  private agent: Agent | undefined;
  private baseTools: readonly AgentTool[] = [];
  /** What the extensions' tool sources offered at the last `refreshTools`. */
  private found: { ext: LoadedExtension; def: ToolDefinition }[] = [];
  private readonly nextTurn: CustomMessage[] = [];
  private baseSystemPrompt = "";

  /** The host as extensions see it: stopping through it also tells `thread_stop` handlers. */
  private readonly hostView: ExtensionHost;

  constructor(
    private readonly runner: ExtensionRegistry,
    readonly host: ExtensionHost,
    private readonly options: ThreadExtensionsOptions = {},
  ) {
    this.hostView = withStopEvents(host, (reason) => this.emitStop(reason));
  }

  /** A context for this thread (`signal`: the run's, inside hooks and tools). */
  context(signal?: AbortSignal): ExtensionContext {
    return createContext(
      {
        host: this.hostView,
        logger: this.runner.logger,
        agent: this.agent,
        getApiKey: this.runner.getApiKey,
        settingsPolicy: this.runner.settingsPolicy,
        nextTurn: this.nextTurn,
        toolHooks: () => {
          const { beforeToolCall, afterToolCall } = this.agentHooks();
          return { beforeToolCall, afterToolCall };
        },
      },
      signal,
    );
  }

  private toolEnv(): ToolBindingEnv {
    return { runner: this.runner, host: this.host, context: (signal) => this.context(signal) };
  }

  /**
   * The thread's tools: `baseTools`, then tools registered by extensions (a registered tool replaces
   * a base tool of the same name), each passed through the wrappers for its name, filtered by
   * `activeTools`, then the tools the extensions' sources offered at the last `refreshTools` (not
   * filtered by `activeTools`; a name already taken is left out). Tools of an extension disabled
   * later fail with an error result when called.
   */
  tools(baseTools: readonly AgentTool[] = this.baseTools): ExtensionTool[] {
    // Kept for the refresh before each run (`prepareRun`), which passes none.
    this.baseTools = baseTools;
    const byName = new Map<string, ExtensionTool>();
    for (const t of baseTools) byName.set(t.name, t);
    const registeredBy = new Map<string, string>();
    for (const ext of this.runner.enabled()) {
      for (const def of ext.tools) {
        const owner = registeredBy.get(def.name);
        if (owner) {
          this.runner.logger.warn({ tool: def.name, extension: ext.name, owner }, "tool name taken; ignored");
          continue;
        }
        registeredBy.set(def.name, ext.name);
        byName.set(def.name, bindTool(this.toolEnv(), ext, def));
      }
    }
    const active = this.options.activeTools;
    if (active) {
      const unknown = active.filter((n) => !byName.has(n));
      if (unknown.length > 0) this.runner.logger.warn({ unknown }, "activeTools names no such tool");
    }
    const out: ExtensionTool[] = [];
    for (const [name, tool] of byName) {
      if (active && !active.includes(name)) continue;
      out.push(applyWrappers(this.toolEnv(), tool));
    }
    for (const { ext, def } of this.found) {
      if (!ext.enabled) continue;
      if (byName.has(def.name)) {
        this.runner.logger.warn({ tool: def.name, extension: ext.name }, "found tool's name taken; left out");
        continue;
      }
      const tool = bindTool(this.toolEnv(), ext, def);
      byName.set(def.name, tool);
      out.push(applyWrappers(this.toolEnv(), tool));
    }
    return out;
  }

  /**
   * Asks every enabled extension's tool sources for this thread's tools (`ToolSource`); `tools()`
   * then includes them. A source that rejects, or offers an invalid name, is reported (the
   * extension disabled, as for any handler's fault) and the others still count.
   */
  async refreshTools(): Promise<void> {
    const found: { ext: LoadedExtension; def: ToolDefinition }[] = [];
    const ctx = this.context();
    for (const ext of this.runner.enabled()) {
      for (const source of ext.toolSources) {
        const out = await this.invoke(ext, "tool source", ctx, () => source(ctx));
        if (!out.ok || !out.value) continue;
        for (const def of out.value) {
          if (TOOL_NAME.test(def.name)) found.push({ ext, def });
          else
            this.runner.logger.warn(
              { tool: def.name, extension: ext.name },
              "found tool's name is invalid; left out",
            );
        }
      }
    }
    this.found = found;
  }

  /** `beforeToolCall`, `afterToolCall` and `transformContext` for `new Agent({...})`. */
  agentHooks(): ExtensionAgentHooks {
    return {
      beforeToolCall: (ctx, signal) => this.beforeToolCall(ctx, signal),
      afterToolCall: (ctx, signal) => this.afterToolCall(ctx, signal),
      transformContext: (messages, signal) => this.transformContext(messages, signal),
    };
  }

  /**
   * Attaches the thread's agent: its events reach `on(...)` handlers, and model, thinking and
   * injected messages apply to it directly. Its current system prompt becomes the base that
   * `before_agent_start` handlers extend. Returns the function that detaches.
   */
  attach(agent: Agent): () => void {
    this.agent = agent;
    this.baseSystemPrompt = agent.state.systemPrompt;
    const unsubscribe = agent.subscribe((event) => {
      const handlers = this.handlersOf(event.type);
      if (handlers.length === 0) return;
      const ctx = this.context();
      for (const { ext, handler } of handlers) {
        void this.invoke(ext, event.type, ctx, () => handler(event as never, ctx));
      }
    });
    return () => {
      unsubscribe();
      if (this.agent === agent) this.agent = undefined;
    };
  }

  /**
   * Runs `before_agent_start` for a run about to start with `prompt` (the user's text): each handler
   * sees the system prompt as extended so far and may add one message. Messages queued with
   * `deliverAs: "nextTurn"` come first. The base system prompt is the agent's at `attach` (or
   * `systemPrompt`), so extensions extend it afresh for every run instead of piling up.
   */
  async beforeAgentStart(
    prompt: string,
    systemPrompt: string = this.baseSystemPrompt,
  ): Promise<{ messages: CustomMessage[]; systemPrompt: string }> {
    const messages = this.nextTurn.splice(0);
    let current = systemPrompt;
    const ctx = this.context();
    for (const { ext, handler } of this.handlersOf("before_agent_start")) {
      const event = { type: "before_agent_start" as const, prompt, systemPrompt: current };
      const out = await this.invoke(ext, "before_agent_start", ctx, () => handler(event, ctx));
      if (!out.ok || !out.value) continue;
      if (typeof out.value.systemPrompt === "string") current = out.value.systemPrompt;
      if (out.value.message) messages.push(toCustomMessage(out.value.message));
    }
    return { messages, systemPrompt: current };
  }

  /**
   * For the worker: applies `before_agent_start` to the attached agent (sets its system prompt for
   * this run), gives it the tools the tool sources offer now, and returns the messages to pass to `agent.prompt()`: the injected ones, then `prompts`.
   */
  async prepareRun(prompts: AgentMessage[]): Promise<AgentMessage[]> {
    const agent = this.agent;
    if (!agent) throw new Error("prepareRun needs an attached agent: call attach(agent) first.");
    const text = prompts.map(promptText).filter(Boolean).join("\n");
    const { messages, systemPrompt } = await this.beforeAgentStart(text);
    agent.setSystemPrompt(systemPrompt);
    if (this.runner.enabled().some((ext) => ext.toolSources.length > 0)) {
      await this.refreshTools();
      agent.setTools(this.tools());
    }
    return [...messages, ...prompts];
  }

  /** Delivers a session event. For `session_before_*`, any handler's `cancel` cancels. */
  async emitSession(event: SessionEvent): Promise<SessionEventResult> {
    const ctx = this.context();
    for (const { ext, handler } of this.handlersOf(event.type)) {
      const out = await this.invoke(ext, event.type, ctx, () => handler(event as never, ctx));
      const value = out.ok ? (out.value as SessionEventResult | undefined) : undefined;
      if (value?.cancel)
        return { cancel: true, reason: value.reason ?? `cancelled by extension "${ext.name}"` };
    }
    return {};
  }

  /**
   * Tells `thread_stop` handlers that the thread was stopped or restarted, and returns their notes.
   * Stopping through an extension context's `host` does this by itself; call it when the thread
   * was stopped another way (a runtime interrupt).
   */
  async emitStop(reason: ThreadStopEvent["reason"]): Promise<string[]> {
    const ctx = this.context();
    const notes: string[] = [];
    for (const { ext, handler } of this.handlersOf("thread_stop")) {
      const out = await this.invoke(ext, "thread_stop", ctx, () =>
        handler({ type: "thread_stop", reason }, ctx),
      );
      if (out.ok && out.value?.note) notes.push(out.value.note);
    }
    return notes;
  }

  /**
   * Runs command `name` (or an alias) with `args`. Resolves false when no enabled command has that
   * name (the caller then treats the text as a normal message), true when a handler ran, even if it
   * failed (the invoker then got an error reply and the extension was disabled).
   */
  async runCommand(name: string, args: string, signal?: AbortSignal): Promise<boolean> {
    const command = this.runner.command(name);
    if (!command) return false;
    const base = this.context(signal);
    const user = this.host.thread.user ?? { id: "unknown" };
    const ctx: ExtensionCommandContext = { ...base, user, reply: (text) => this.host.reply(text) };
    const out = await this.invoke(command.extension, `command /${command.name}`, ctx, () =>
      command.options.handler(args, ctx),
    );
    if (!out.ok) {
      await this.host
        .reply(`/${command.name} failed: ${out.error}`)
        .catch((e: unknown) => this.runner.logger.warn({ err: e }, "could not reply"));
    }
    return true;
  }

  /** Argument suggestions of command `name` for `prefix` (empty when it has none or fails). */
  async completions(name: string, prefix: string): Promise<CompletionItem[]> {
    const command = this.runner.command(name);
    const complete = command?.options.getArgumentCompletions;
    if (!command || !complete) return [];
    const out = await this.invoke(command.extension, `completion /${command.name}`, this.context(), () =>
      complete.call(command.options, prefix),
    );
    return out.ok ? (out.value ?? []) : [];
  }

  /** Offers a reaction to `reaction` handlers; resolves true when one of them handled it. */
  async handleReaction(reaction: Omit<ReactionEvent, "type">): Promise<boolean> {
    const event: ReactionEvent = { type: "reaction", ...reaction };
    const ctx = this.context();
    let handled = false;
    for (const { ext, handler } of this.handlersOf("reaction")) {
      const out = await this.invoke(ext, "reaction", ctx, () => handler(event, ctx));
      if (out.ok && out.value?.handled) handled = true;
    }
    return handled;
  }

  private async beforeToolCall(
    call: BeforeToolCallContext,
    signal: AbortSignal | undefined,
  ): Promise<BeforeToolCallResult | undefined> {
    const ctx = this.context(signal);
    const event = {
      type: "tool_call" as const,
      toolCallId: call.toolCall.id,
      toolName: call.toolCall.name,
      input: call.args,
      tool: call.tool as ExtensionTool,
    };
    for (const { ext, handler } of this.handlersOf("tool_call")) {
      const out = await this.invoke(ext, "tool_call", ctx, () => handler(event, ctx));
      if (!out.ok) {
        return {
          block: true,
          reason: `Blocked: extension "${ext.name}" failed while checking this call (${out.error}).`,
        };
      }
      if (out.value?.block) {
        return { block: true, reason: out.value.reason ?? `Blocked by extension "${ext.name}".` };
      }
    }
    return undefined;
  }

  private async afterToolCall(
    call: AfterToolCallContext,
    signal: AbortSignal | undefined,
  ): Promise<AfterToolCallResult | undefined> {
    const handlers = this.handlersOf("tool_result");
    let current = { content: call.result.content, details: call.result.details, isError: call.isError };
    let changed = false;
    if (handlers.length > 0) {
      const ctx = this.context(signal);
      for (const { ext, handler } of handlers) {
        const event = {
          type: "tool_result" as const,
          toolCallId: call.toolCall.id,
          toolName: call.toolCall.name,
          input: call.args,
          ...current,
        };
        const out = await this.invoke(ext, "tool_result", ctx, () => handler(event, ctx));
        if (!out.ok || !out.value) continue;
        const patch = out.value;
        current = {
          content: patch.content ?? current.content,
          details: patch.details !== undefined ? patch.details : current.details,
          isError: patch.isError ?? current.isError,
        };
        changed = true;
      }
    }
    // Last, after every handler: what a tool printed of a configured secret never goes further.
    const scrub = this.runner.scrubToolOutput;
    if (scrub) {
      let scrubbed = false;
      const content = current.content.map((c) => {
        if (c.type !== "text") return c;
        const text = scrub(c.text);
        if (text === c.text) return c;
        scrubbed = true;
        return { ...c, text };
      });
      if (scrubbed) {
        current = { ...current, content };
        changed = true;
      }
    }
    return changed ? current : undefined;
  }

  private async transformContext(messages: AgentMessage[], signal?: AbortSignal): Promise<AgentMessage[]> {
    let current = messages;
    const ctx = this.context(signal);
    for (const { ext, handler } of this.handlersOf("context")) {
      const event = { type: "context" as const, messages: current.slice() };
      const out = await this.invoke(ext, "context", ctx, () => handler(event, ctx));
      if (out.ok && Array.isArray(out.value?.messages)) current = out.value.messages;
    }
    return current;
  }

  private handlersOf<T extends ExtensionEventType>(
    type: T,
  ): { ext: LoadedExtension; handler: ExtensionHandler<T> }[] {
    const out: { ext: LoadedExtension; handler: ExtensionHandler<T> }[] = [];
    for (const ext of this.runner.enabled()) {
      for (const handler of ext.handlers.get(type) ?? []) {
        out.push({ ext, handler: handler as unknown as ExtensionHandler<T> });
      }
    }
    return out;
  }

  /** Calls `fn` as `ext` inside `ctx`; a throw disables `ext` (with a notice in this thread). */
  private async invoke<R>(
    ext: LoadedExtension,
    phase: string,
    ctx: ExtensionContext,
    fn: () => R | Promise<R>,
  ): Promise<{ ok: true; value: Exclude<Awaited<R>, void> | undefined } | { ok: false; error: string }> {
    if (!ext.enabled) return { ok: true, value: undefined };
    try {
      const value = await this.runner.current.run(ctx, fn);
      return { ok: true, value: (value ?? undefined) as Exclude<Awaited<R>, void> | undefined };
    } catch (e) {
      this.runner.disable(ext, phase, e, this.host);
      return { ok: false, error: errorText(e) };
    }
  }
}

function promptText(message: AgentMessage): string {
  if (message.role !== "user" && message.role !== "custom") return "";
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
