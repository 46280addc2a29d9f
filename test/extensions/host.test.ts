/**
 * The production `ExtensionHost` (`ThreadHost`, as the gateway builds it over the embedded runtime,
 * its file store and the thread's channel adapter) and the in-memory `MemoryHost` of the extension
 * tests both run the host contract.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageRef } from "../../src/adapters/types.js";
import { Agent } from "../../src/agent/agent.js";
import { convertToLlm } from "../../src/agent/session/messages.js";
import { ThreadHost } from "../../src/gateway/app/thread-host.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { RecordingAdapter } from "../adapters/support/recording-adapter.js";
import { ManualClock } from "../support/manual-clock.js";
import { ScriptedStream, scriptedModel } from "../support/scripted-stream.js";
import { extensionHostContract } from "./host-contract.js";
import { MemoryHost } from "./support/memory-host.js";

/** A recording adapter that also keeps the emoji of each reaction. */
class ChatAdapter extends RecordingAdapter {
  readonly reactionsOf = new Map<MessageRef, string[]>();
  override async react(ref: MessageRef, emoji = ""): Promise<void> {
    await super.react(ref);
    this.reactionsOf.set(ref, [...(this.reactionsOf.get(ref) ?? []), emoji]);
  }
}

let threads = 0;

extensionHostContract("ThreadHost over the embedded runtime", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-host-"));
  const adapter = new ChatAdapter(new ManualClock());
  const model = new ScriptedStream(() => "ok");
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    sinks: new RecordingSinks().factory,
    agentFactory: (ctx) =>
      new Agent({
        initialState: { model: scriptedModel(), messages: ctx.messages },
        streamFn: model.streamFn,
        convertToLlm,
      }),
    modeOf: () => "followUp",
  });
  await runtime.start();
  const threadKey = `web:host-${++threads}`;
  const replies: string[] = [];
  const host = new ThreadHost(
    {
      runtime,
      store: runtime.store,
      adapterOf: (p) => (p === "web" ? adapter : undefined),
      defaultModel: () => "alpha/one",
      logger: silentProcessLogger(),
    },
    {
      threadKey,
      platform: "web",
      user: () => ({ id: "web:local", name: "Ada" }),
      reply: async (text) => {
        replies.push(text);
      },
    },
  );
  const session = async () => {
    const meta = await runtime.store.getThreadMeta(threadKey);
    return meta?.currentSessionId ? runtime.store.readAll(threadKey, meta.currentSessionId) : undefined;
  };
  return {
    host,
    text: (ref) => adapter.chat.get(ref),
    reactions: (ref) => adapter.reactionsOf.get(ref) ?? [],
    replies: () => replies,
    async received() {
      const read = await session();
      return (read?.entries ?? []).flatMap((e) =>
        e.type === "message" && e.message.role === "user"
          ? [
              typeof e.message.content === "string"
                ? e.message.content
                : e.message.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
            ]
          : [],
      );
    },
    async entries() {
      const read = await session();
      return (read?.entries ?? []).flatMap((e) =>
        e.type === "custom" ? [{ customType: e.customType, data: e.data }] : [],
      );
    },
    async settle() {
      for (let i = 0; i < 500; i++) {
        const s = await runtime.status(threadKey);
        if (!s.active && s.inboxDepth === 0) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("the thread did not become idle");
    },
    defaultModel: "alpha/one",
    queueMode: "followUp",
    async close() {
      await runtime.stop({ graceMs: 500 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

extensionHostContract("MemoryHost", async () => {
  const host = new MemoryHost();
  host.settings = { model: "alpha/one", thinkingLevel: undefined };
  host.queueMode = "followUp";
  return {
    host,
    text: (ref) => host.message(ref)?.versions.at(-1),
    reactions: (ref) => host.message(ref)?.reactions ?? [],
    replies: () => host.replies,
    received: async () => [
      ...host.delivered.map((d) => d.text),
      ...host.sent.map((s) => (typeof s.message.content === "string" ? s.message.content : "")),
    ],
    entries: async () => host.entries,
    settle: async () => {},
    defaultModel: "alpha/one",
    queueMode: "followUp",
    close: async () => {},
  };
});
