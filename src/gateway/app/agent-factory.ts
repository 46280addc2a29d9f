/**
 * The worker side's `AgentFactory`: one `Agent` per thread with the thread's model (its setting,
 * else the deployment's default), thinking level (clamped to the model), the system prompt, the
 * channel's tools, the extensions' hooks and `convertToLlm` (so compaction summaries and injected
 * messages reach the model). The runtime adds the inbox (steering and follow-up sources) and
 * per-call compaction itself, in front of the extensions' `context` handlers (`Agent.addHooks`).
 */
import { Agent } from "../../agent/agent.js";
import { failedStream } from "../../agent/llm/failed-stream.js";
import { clampThinkingLevel } from "../../agent/llm/thinking.js";
import type { Model, ThinkingLevel } from "../../agent/llm/types.js";
import { convertToLlm } from "../../agent/session/messages.js";
import type { StreamFn } from "../../agent/types.js";
import { resolveModelRef } from "../../extensions/context.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import type { ExtensionHost, ThreadUser } from "../../extensions/types.js";
import { channelKeyOf, userKeyOf } from "../../queue/budgets/policy.js";
import type { AgentFactory } from "../../queue/types.js";
import type { ChannelsConfig, ModelsConfig } from "../config/types.js";
import { type Logger, threadLogger } from "../log.js";
import type { BudgetCaller } from "./budgets/gate.js";
import { NO_MODEL, NO_MODEL_TEXT } from "./models.js";
import { platformOf } from "./platforms.js";
import { ThreadHost, type ThreadHostDeps } from "./thread-host.js";

export interface AgentFactoryOptions {
  runner: ExtensionRunner;
  hostDeps: ThreadHostDeps;
  channels: ChannelsConfig;
  models: ModelsConfig;
  defaultModel: Model | undefined;
  systemPrompt: string;
  /**
   * How a thread's agent calls its model (the process's one way: stall timeout, usage metrics, the
   * budget gate for the calls of `caller`).
   */
  streamFor(caller: () => BudgetCaller): StreamFn;
  /** Counts agents held in this process, for the active-threads gauge. */
  liveAgents: { count: number };
  logger: Logger;
}

/**
 * `stream` (the process's model calls), except that a request to `NO_MODEL` ends at once with the
 * set-up instructions as its failure (data, not a throw, so the chat shows the instructions rather
 * than "the model call failed").
 */
const withSetUpInstructions =
  (call: StreamFn): StreamFn =>
  (model, context, options) =>
    model.provider !== NO_MODEL.provider ? call(model, context, options) : failedStream(model, NO_MODEL_TEXT);

export function createAgentFactory(o: AgentFactoryOptions): AgentFactory {
  return async (ctx) => {
    const platform = platformOf(ctx.threadKey, o.channels);
    if (!platform) throw new Error(`Thread key "${ctx.threadKey}" names no known platform.`);
    const log = threadLogger(o.logger, { threadKey: ctx.threadKey, platform });
    // Who the run answers (the latest asker), e.g. for the approval request's "triggered by".
    const runUser = (): ThreadUser | undefined => {
      const latest = ctx.currentInbound?.().at(-1)?.user;
      if (!latest) return undefined;
      return latest.name ? { id: latest.id, name: latest.name } : { id: latest.id };
    };
    // Whose budget a call counts against: the run's asker, kept after the run so that the summary
    // compaction makes then counts against the same person.
    let lastAsker: ThreadUser | undefined;
    const budgetUser = (): ThreadUser | undefined => {
      lastAsker = runUser() ?? lastAsker;
      return lastAsker;
    };
    const host = new ThreadHost(o.hostDeps, {
      threadKey: ctx.threadKey,
      platform,
      user: runUser,
      ...(ctx.appendEntry ? { appendEntry: ctx.appendEntry } : {}),
      ...(ctx.renderLog ? { renderLog: ctx.renderLog } : {}),
    });
    const caller = (): BudgetCaller => budgetCaller(ctx.threadKey, platform, budgetUser(), host);
    const streamFn = withSetUpInstructions(o.streamFor(caller));
    const tools = o.channels[platform].tools;
    const thread = o.runner.bind(host, tools ? { activeTools: tools } : {});
    let model = ctx.model ? resolveModelRef(ctx.model) : o.defaultModel;
    if (!model && ctx.model) {
      log.warn({ model: ctx.model }, "the thread's model is not known any more; using the default");
      model = o.defaultModel;
    }
    const level: ThinkingLevel = ctx.thinkingLevel ?? o.models.thinkingLevel;
    const hooks = thread.agentHooks();
    const agent = new Agent({
      initialState: {
        model: model ?? NO_MODEL,
        systemPrompt: o.systemPrompt,
        thinkingLevel: model ? clampThinkingLevel(model, level) : "off",
        messages: ctx.messages,
        tools: thread.tools(),
      },
      convertToLlm,
      ...hooks,
      streamFn,
      onListenerError: (err, event) => log.error({ err, event: event.type }, "agent listener failed"),
    });
    const detach = thread.attach(agent);
    o.liveAgents.count++;
    ctx.signal.addEventListener(
      "abort",
      () => {
        detach();
        o.liveAgents.count--;
      },
      { once: true },
    );
    return {
      agent,
      prepareRun: (prompts) => thread.prepareRun(prompts),
      onSessionEvent: (event) => thread.emitSession(event),
    };
  };
}

/**
 * Who a thread's calls are for, as the budget gate counts them: the thread, its channel, the
 * person the run answers; budget notices go to the thread through its host.
 */
export function budgetCaller(
  threadKey: string,
  platform: string,
  user: ThreadUser | undefined,
  host: Pick<ExtensionHost, "post" | "edit" | "react" | "durableMessage">,
): BudgetCaller {
  return {
    threadKey,
    platform,
    channelKey: channelKeyOf(threadKey),
    ...(user ? { user, userKey: userKeyOf(platform, user.id) } : {}),
    chat: {
      post: (text) => host.post(text, { format: "markdown" }),
      react: (ref, emoji) => host.react(ref, emoji),
      async postRequest(id, text, ifStopped) {
        // Journaled like a tool approval's request (`approval:<id>`): a worker that dies waiting
        // leaves it ending as `ifStopped`, and the next holder closes the request itself.
        const durable = host.durableMessage?.(`approval:${id}`);
        if (durable) return { ref: await durable.post(text, ifStopped), finish: (t) => durable.finish(t) };
        const ref = await host.post(text, { format: "markdown" });
        return { ref, finish: (t) => host.edit(ref, t, { format: "markdown" }) };
      },
    },
  };
}
