/**
 * Builds the `ExtensionContext` of one thread: thread-bound actions go to the host, and when an
 * agent is attached (worker side) model, thinking and injected messages also reach it directly.
 */
import type { Agent } from "../agent/agent.js";
import { findModel, hasCredentials, listModels } from "../agent/llm/models.js";
import { clampThinkingLevel } from "../agent/llm/thinking.js";
import type { Model, Provider, ThinkingLevel } from "../agent/llm/types.js";
import type { StructuredLogger } from "../agent/logger.js";
import type { CustomMessage } from "../agent/session/messages.js";
import type { AgentTool } from "../agent/types.js";
import {
  type DeliverAs,
  type ExtensionContext,
  type ExtensionHost,
  type ExtensionMessage,
  type SettingsPolicy,
  SettingsRefusedError,
} from "./types.js";

/** The parts of a thread binding a context needs. */
export interface ContextSource {
  host: ExtensionHost;
  logger: StructuredLogger;
  agent: Agent | undefined;
  getApiKey: ((provider: Provider) => string | undefined) | undefined;
  /** Messages held for the next run (`deliverAs: "nextTurn"` with an agent attached). */
  nextTurn: CustomMessage[];
  toolHooks: ExtensionContext["toolHooks"];
  /** Who may change the thread's settings; undefined: everyone. */
  settingsPolicy: SettingsPolicy | undefined;
}

/**
 * The model `ref` names: `provider/id` or a bare id as `findModel` reads them, else a
 * case-insensitive match of the id or `provider/id`. Undefined when nothing matches.
 */
export function resolveModelRef(ref: string): Model | undefined {
  const exact = findModel(ref);
  if (exact) return exact;
  const needle = ref.trim().toLowerCase();
  return listModels().find(
    (m) => m.id.toLowerCase() === needle || `${m.provider}/${m.id}`.toLowerCase() === needle,
  );
}

/** `provider/id` of a model. */
export function modelRef(model: Pick<Model, "provider" | "id">): string {
  return `${model.provider}/${model.id}`;
}

export function toCustomMessage(message: ExtensionMessage): CustomMessage {
  const out: CustomMessage = {
    role: "custom",
    customType: message.customType,
    content: message.content,
    display: message.display,
    timestamp: Date.now(),
  };
  if (message.details !== undefined) out.details = message.details;
  return out;
}

/** A context for `source`'s thread; `signal` is the run's (agent hooks, tools) or undefined. */
export function createContext(source: ContextSource, signal: AbortSignal | undefined): ExtensionContext {
  const { host, agent } = source;
  const getModel = async (): Promise<Model | undefined> => {
    if (agent) return agent.state.model;
    const { model } = await host.getSettings();
    return model ? resolveModelRef(model) : undefined;
  };
  const mayChangeSettings = (): boolean =>
    host.thread.user === undefined ||
    source.settingsPolicy === undefined ||
    source.settingsPolicy(host.thread);
  return {
    thread: host.thread,
    signal,
    logger: source.logger,
    host,
    mayChangeSettings,
    async sendMessage(message, options) {
      const custom = toCustomMessage(message);
      const deliverAs: DeliverAs = options?.deliverAs ?? (agent?.state.isStreaming ? "steer" : "nextTurn");
      if (!agent) return host.sendMessage(custom, deliverAs);
      if (deliverAs === "steer") agent.steer(custom);
      else if (deliverAs === "followUp") agent.followUp(custom);
      else source.nextTurn.push(custom);
    },
    appendEntry(customType, data) {
      return host.appendEntry(customType, data);
    },
    getModel,
    async setModel(model) {
      if (!mayChangeSettings()) throw new SettingsRefusedError("model", host.thread);
      const resolved = typeof model === "string" ? resolveModelRef(model) : model;
      if (!resolved || !hasCredentials(resolved, source.getApiKey)) return false;
      await host.setModel(modelRef(resolved));
      agent?.setModel(resolved);
      return true;
    },
    async getThinkingLevel() {
      if (agent) return agent.state.thinkingLevel;
      return (await host.getSettings()).thinkingLevel ?? "off";
    },
    async setThinkingLevel(level: ThinkingLevel) {
      if (!mayChangeSettings()) throw new SettingsRefusedError("thinking level", host.thread);
      const model = await getModel();
      const effective = model ? clampThinkingLevel(model, level) : level;
      await host.setThinkingLevel(effective);
      agent?.setThinkingLevel(effective);
      return effective;
    },
    getTools(): AgentTool[] {
      return agent ? [...agent.state.tools] : [];
    },
    toolHooks: source.toolHooks,
  };
}
