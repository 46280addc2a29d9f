/**
 * Micro figures: agent loop overhead per turn, SSE parsing throughput per provider, session load
 * time by branch length, heap per idle cached thread, and launch → polling.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Type } from "@sinclair/typebox";
import { Redis } from "ioredis";
import { Agent } from "../../src/agent/agent.js";
import { AssistantMessageEventStream } from "../../src/agent/llm/event-stream.js";
import { registerBuiltInApiProviders } from "../../src/agent/llm/providers/index.js";
import { streamSimple } from "../../src/agent/llm/stream.js";
import type { Api, AssistantMessage, Model } from "../../src/agent/llm/types.js";
import { createAssistantMessage } from "../../src/agent/llm/usage.js";
import { newEntryId } from "../../src/agent/session/entries.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import type { AgentTool, StreamFn } from "../../src/agent/types.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { SessionStore } from "../../src/queue/store/types.js";
import { type FakeApi, startFakeLlmServer } from "../../test/fakes/llm-server.js";
import { createPacedModel, nowMs, pacedModelInfo } from "../lib/paced-model.js";
import { pacedAgentFactory } from "../lib/pipeline.js";
import { summarize } from "../lib/stats.js";
import { addFigure, repeat, type Section } from "./index.js";
import { ensureBuilt, launchToPolling } from "./launch.js";

// ---- agent loop overhead -------------------------------------------------------------------

/** A stream that answers at once with a tool call (until `turns` calls), then with text. */
function instantStream(turns: number): StreamFn {
  let calls = 0;
  return (model) => {
    calls++;
    const out = new AssistantMessageEventStream();
    const m: AssistantMessage = createAssistantMessage(model);
    if (calls % turns !== 0) {
      m.content.push({ type: "toolCall", id: `c${calls}`, name: "noop", arguments: { n: calls } });
      m.stopReason = "toolUse";
    } else {
      m.content.push({ type: "text", text: "done" });
      m.stopReason = "stop";
    }
    out.push({ type: "start", partial: m });
    out.push({ type: "done", reason: m.stopReason, message: m });
    return out;
  };
}

const noopTool: AgentTool = {
  name: "noop",
  label: "noop",
  description: "Does nothing.",
  parameters: Type.Object({ n: Type.Number() }),
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

async function loopOverheadUs(turns: number): Promise<number> {
  const agent = new Agent({
    initialState: { model: pacedModelInfo(), thinkingLevel: "off", messages: [], tools: [noopTool] },
    streamFn: instantStream(turns),
  });
  await agent.prompt("warm up");
  agent.reset();
  const t0 = nowMs();
  await agent.prompt("go");
  return ((nowMs() - t0) * 1000) / turns;
}

// ---- SSE parsing -----------------------------------------------------------------------------

const PROVIDERS: { api: FakeApi; provider: string }[] = [
  { api: "anthropic-messages", provider: "anthropic" },
  { api: "openai-completions", provider: "openai" },
  { api: "openai-responses", provider: "openai" },
  { api: "google-generative-ai", provider: "google" },
];

/**
 * The provider's stream function over an in-memory SSE body (bytes recorded once from the fake
 * LLM server), so only parsing and event building are timed. Returns MB/s of SSE bytes.
 */
async function sseThroughput(
  api: FakeApi,
  provider: string,
  textKb: number,
  runs: number,
): Promise<number[]> {
  const llm = await startFakeLlmServer();
  const model: Model = {
    id: "bench-model",
    name: "bench",
    api: api as Api,
    provider,
    baseUrl: llm.baseUrl(api),
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 100_000,
  };
  const text = "lorem ipsum dolor sit amet ".repeat(Math.ceil((textKb * 1024) / 27)).slice(0, textKb * 1024);
  llm.respondWith(api, () => ({ text, fragmentSize: 16, usage: { input: 10, output: 1000 } }));
  const realFetch = globalThis.fetch;
  let recorded: Uint8Array | undefined;
  let headers: Headers | undefined;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    if (!recorded) {
      const res = await realFetch(input, init);
      recorded = new Uint8Array(await res.arrayBuffer());
      headers = res.headers;
    }
    const body = recorded;
    // 64 KB chunks, as a socket delivers them.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < body.length; i += 65_536) c.enqueue(body.subarray(i, i + 65_536));
        c.close();
      },
    });
    return new Response(stream, { status: 200, headers: headers ?? {} });
  }) as typeof fetch;
  const out: number[] = [];
  try {
    const consume = async () => {
      const s = streamSimple(
        model,
        { messages: [{ role: "user", content: "hi", timestamp: 0 }] },
        { apiKey: "k" },
      );
      const final = await s.result();
      if (final.stopReason !== "stop") throw new Error(`${api}: ${final.errorMessage}`);
    };
    await consume();
    await consume();
    for (let i = 0; i < runs; i++) {
      const t0 = nowMs();
      await consume();
      out.push((recorded?.length ?? 0) / 2 ** 20 / ((nowMs() - t0) / 1000));
    }
  } finally {
    globalThis.fetch = realFetch;
    await llm.close();
  }
  return out;
}

// ---- session load --------------------------------------------------------------------------

async function fillSession(store: SessionStore, threadKey: string, entries: number): Promise<void> {
  const header = await store.createSession(threadKey);
  let parent: string | null = null;
  const taken = new Set<string>();
  for (let done = 0; done < entries; ) {
    const batch: SessionEntry[] = [];
    for (let i = 0; i < 500 && done < entries; i++, done++) {
      const id = newEntryId(taken);
      taken.add(id);
      const user = done % 2 === 0;
      const text = `${user ? "question" : "answer"} ${done}: ${"some words of a typical chat message ".repeat(4)}`;
      batch.push({
        type: "message",
        id,
        parentId: parent,
        timestamp: new Date().toISOString(),
        message: user
          ? { role: "user", content: text, timestamp: Date.now() }
          : {
              ...createAssistantMessage(pacedModelInfo()),
              content: [{ type: "text", text }],
              stopReason: "stop",
            },
      } as SessionEntry);
      parent = id;
    }
    await store.append(threadKey, header.id, batch);
  }
}

async function sessionLoadMs(redisUrl: string, sizes: number[], runs: number) {
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-sess-"));
  const redis = new Redis(redisUrl);
  const prefix = `sbl:${Math.random().toString(36).slice(2, 8)}:`;
  const result: Record<string, { file: number[]; redis: number[] }> = {};
  try {
    const redisStore = new RedisSessionStore({ redis, prefix });
    const fileStore = new FileSessionStore({ dataDir: dir });
    for (const n of sizes) {
      await fillSession(fileStore, `bench:${n}`, n);
      await fillSession(redisStore, `bench:${n}`, n);
      const r = { file: [] as number[], redis: [] as number[] };
      for (let i = 0; i < runs + 1; i++) {
        // A new file store each time: a cold load (a worker taking a thread it has not cached).
        const cold = new FileSessionStore({ dataDir: dir });
        let t0 = nowMs();
        const fb = await cold.readBranch(`bench:${n}`);
        const fileMs = nowMs() - t0;
        t0 = nowMs();
        const rb = await redisStore.readBranch(`bench:${n}`);
        const redisMs = nowMs() - t0;
        if (fb?.entries.length !== n + 2 && fb?.entries.length !== n) {
          // model/thinking entries may precede the messages; anything else is a bench bug.
          if ((fb?.entries.length ?? 0) < n)
            throw new Error(`file branch has ${fb?.entries.length} entries, want ${n}`);
        }
        if ((rb?.entries.length ?? 0) < n)
          throw new Error(`redis branch has ${rb?.entries.length} entries, want ${n}`);
        if (i > 0) {
          r.file.push(fileMs);
          r.redis.push(redisMs);
        }
      }
      result[n] = r;
    }
  } finally {
    let cursor = "0";
    do {
      const [c, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = c;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== "0");
    await redis.quit();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

// ---- heap per idle cached thread ----------------------------------------------------------

function gcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

async function heapPerThreadKb(threads: number): Promise<number> {
  const gc = gcFunction();
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-heap-"));
  const model = createPacedModel();
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
    agentFactory: pacedAgentFactory(model),
    concurrency: 50,
  });
  await runtime.start();
  try {
    const deliverAll = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        await runtime.deliver({
          platform: "web",
          threadKey: `web:heap:${i}`,
          eventId: `web:heap:${i}`,
          messageId: `web:heap:${i}`,
          channelId: "web",
          user: { id: "u1", name: "Ada", isBot: false },
          text: `hello, this is thread ${i} [m${i}]`,
          attachments: [],
          mentioned: true,
          isDirect: true,
          timestamp: Date.now(),
        });
      }
      const deadline = Date.now() + 60_000;
      while (model.endedAt.size < from + count) {
        if (Date.now() > deadline) throw new Error("heap bench: runs did not finish");
        await new Promise((r) => setTimeout(r, 10));
      }
      // Let every holder release its thread (the agent stays cached for agentIdleMs).
      for (let i = from; i < from + count; i++) {
        while ((await runtime.status(`web:heap:${i}`)).active) await new Promise((r) => setTimeout(r, 5));
      }
    };
    await deliverAll(0, 20); // warm-up: code paths and module state
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    await deliverAll(20, threads);
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    return (after - before) / 1024 / threads;
  } finally {
    await runtime.stop({ graceMs: 0 });
    rmSync(dir, { recursive: true, force: true });
  }
}

export const MICRO_SECTIONS: Section[] = [
  {
    id: "loop",
    title: "agent loop overhead per turn (instant model, one no-op tool call per turn)",
    async run(ctx) {
      const turns = ctx.quick ? 200 : 1000;
      const samples = await repeat(ctx, ctx.quick ? 3 : 7, () => loopOverheadUs(turns));
      addFigure(ctx, "agent", samples, (x) => x, {
        name: `loop overhead per turn (${turns}-turn run)`,
        unit: "µs",
      });
    },
  },
  {
    id: "sse",
    title: "SSE parsing throughput per provider (in-memory body, 16-char deltas)",
    async run(ctx) {
      registerBuiltInApiProviders();
      const kb = ctx.quick ? 64 : 256;
      for (const { api, provider } of PROVIDERS) {
        const runs = await sseThroughput(api, provider, kb, ctx.quick ? 3 : 5);
        ctx.log(`${api}: ${runs.map((r) => r.toFixed(1)).join(", ")} MB/s`);
        ctx.add({
          section: "sse",
          name: `${api} (${kb} KB of text)`,
          unit: "MB/s of SSE",
          summary: summarizeRuns(runs),
        });
      }
    },
  },
  {
    id: "session",
    title: "session load time by entries since the last compaction",
    async run(ctx) {
      const sizes = [100, 1000, 10_000];
      const r = await sessionLoadMs(ctx.redisUrl, sizes, ctx.quick ? 2 : 5);
      for (const n of sizes) {
        const x = r[n] as { file: number[]; redis: number[] };
        ctx.log(
          `${n} entries: file ${x.file.map((v) => v.toFixed(1)).join(", ")} ms; redis ${x.redis.map((v) => v.toFixed(1)).join(", ")} ms`,
        );
        ctx.add({
          section: "session",
          name: `readBranch, ${n} entries, file store (cold)`,
          unit: "ms",
          summary: summarizeRuns(x.file),
        });
        ctx.add({
          section: "session",
          name: `readBranch, ${n} entries, Redis store`,
          unit: "ms",
          summary: summarizeRuns(x.redis),
        });
      }
    },
  },
  {
    id: "heap",
    title: "heap per idle cached thread (embedded runtime, one short exchange each)",
    async run(ctx) {
      const threads = ctx.quick ? 200 : 500;
      const samples = await repeat(ctx, ctx.quick ? 1 : 3, () => heapPerThreadKb(threads));
      addFigure(ctx, "heap", samples, (x) => x, {
        name: `heap per idle cached thread (${threads} threads)`,
        unit: "KB",
      });
    },
  },
  {
    id: "launch",
    title: "launch → polling (compiled: node bin/switchboard.js start)",
    async run(ctx) {
      ensureBuilt(ctx.log);
      const samples = await repeat(ctx, ctx.quick ? 1 : 5, () => launchToPolling());
      addFigure(ctx, "launch", samples, (x) => x.ms / 1000, {
        name: "launch → first getUpdates (switchboard start, embedded mode, Telegram)",
        unit: "s",
        target: { op: "<=", value: 0.5 },
      });
      addFigure(ctx, "launch", samples, (x) => x.rssMb, {
        name: "RSS 1 s after polling started (switchboard start, own process)",
        unit: "MB",
        target: { op: "<=", value: 90 },
      });
    },
  },
];

const summarizeRuns = summarize;
