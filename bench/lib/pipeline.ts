/**
 * The product's path, assembled from public APIs the way the gateway wires it: fake Telegram Bot
 * API ← grammY polling (`TelegramAdapter`) → `runtime.deliver` → worker (`RedisRuntime` or
 * `EmbeddedRuntime`) → `Agent` with the paced model → `RunRenderer` → the adapter → the fake.
 *
 * `inject(chat, text)` plays a user writing in a private chat and returns the injection time; the
 * fake's call log (timestamps from the same clock) gives every outbound platform call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRendererFactory, MemoryRateLimiter } from "../../src/adapters/render/index.js";
import { TelegramAdapter } from "../../src/adapters/telegram/adapter.js";
import { Agent } from "../../src/agent/agent.js";
import { convertToLlm } from "../../src/agent/session/index.js";
import { acknowledgeDelivery } from "../../src/gateway/app/acknowledge.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { createRedisClient, type RedisClient } from "../../src/queue/redis/client.js";
import { RedisRuntime } from "../../src/queue/redis/redis-runtime.js";
import { RedisSessionStore } from "../../src/queue/store/redis-store.js";
import type { AgentFactory, Runtime } from "../../src/queue/types.js";
import {
  type FakeChat,
  FakeTelegram,
  type RecordedCall,
  type TgUser,
} from "../../test/fakes/telegram/server.js";
import { createPacedModel, nowMs, type PacedModel, pacedModelInfo, TAG } from "./paced-model.js";

export type Mode = "redis" | "embedded";

export interface PipelineOptions {
  mode: Mode;
  redisUrl?: string;
  /** Telegram flood control in the fake (default on, Telegram's private-chat rule). */
  flood?: boolean;
  /** Threads the worker runs at once; default: the runtime's default (what a config without it gets). */
  concurrency?: number;
  /** The lost-wake sweep's interval (Redis mode); default: the runtime's (5 s). */
  sweepIntervalMs?: number;
  /** Wraps the fake's API root (e.g. a failure-injecting proxy). */
  apiRoot?: (fakeRoot: string) => Promise<string> | string;
  onError?: (e: unknown, context: string) => void;
}

export interface Pipeline {
  mode: Mode;
  fake: FakeTelegram;
  model: PacedModel;
  runtime: Runtime;
  adapter: TelegramAdapter;
  /** The runtime's key prefix (Redis mode). */
  prefix: string;
  /** Tag → when the adapter handed the message to the gateway (polling hop done). */
  receivedAt: Map<string, number>;
  /** Tag → when `deliver` resolved (durable in the inbox, wake job added). */
  queuedAt: Map<string, number>;
  /** Tag → whether `deliver` found the thread idle (no lease held). */
  idleAt: Map<string, boolean>;
  /** Deliver results that were refused or duplicates, and deliver rejections. */
  errors: string[];
  inject(chatId: number, text: string): number;
  /** Outbound calls of the bot (everything but getUpdates and setup calls). */
  outbound(): RecordedCall[];
  close(): Promise<void>;
}

const SETUP = new Set(["getUpdates", "getMe", "deleteWebhook", "setWebhook", "setMyCommands"]);

export function chatOf(id: number): { chat: FakeChat; from: TgUser } {
  return {
    chat: { id, type: "private" },
    from: { id, is_bot: false, first_name: `User${id}` },
  };
}

export function pacedAgentFactory(model: PacedModel): AgentFactory {
  return (ctx) =>
    new Agent({
      initialState: { model: pacedModelInfo(), thinkingLevel: "off", messages: ctx.messages, tools: [] },
      streamFn: model.streamFn,
      convertToLlm,
    });
}

export async function startPipeline(o: PipelineOptions): Promise<Pipeline> {
  const fake = await new FakeTelegram({
    now: nowMs,
    ...(o.flood === false ? { privateRule: null, groupRule: null } : {}),
  }).start();
  const root = o.apiRoot ? await o.apiRoot(fake.apiRoot()) : fake.apiRoot();
  const adapter = new TelegramAdapter({
    token: fake.token,
    apiRoot: root,
    botUsername: "switchboard_bot",
    pollTimeoutSeconds: 5,
  });
  const model = createPacedModel();
  const sinks = createRendererFactory({ adapter, limiter: new MemoryRateLimiter() });
  const agentFactory = pacedAgentFactory(model);
  const prefix = `sbb:${Math.random().toString(36).slice(2, 8)}:`;
  const onError =
    o.onError ?? ((e: unknown, c: string) => errors.push(`${c}: ${e instanceof Error ? e.message : e}`));
  const errors: string[] = [];
  let redis: RedisClient | undefined;
  let dataDir: string | undefined;
  let runtime: Runtime;
  if (o.mode === "redis") {
    if (!o.redisUrl) throw new Error("startPipeline: redis mode needs redisUrl.");
    redis = createRedisClient({ url: o.redisUrl }, { maxRetriesPerRequest: null });
    runtime = new RedisRuntime({
      redis,
      prefix,
      store: new RedisSessionStore({ redis, prefix }),
      sinks,
      agentFactory,
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.sweepIntervalMs !== undefined ? { sweepIntervalMs: o.sweepIntervalMs } : {}),
      onError,
    });
  } else {
    dataDir = mkdtempSync(join(tmpdir(), "sb-bench-data-"));
    runtime = new EmbeddedRuntime({
      dataDir,
      sinks,
      agentFactory,
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      onError,
    });
  }
  await runtime.start();
  const receivedAt = new Map<string, number>();
  const queuedAt = new Map<string, number>();
  const idleAt = new Map<string, boolean>();
  await adapter.start({
    onMessage: async (m) => {
      const tag = TAG.exec(m.text)?.[1];
      if (tag) receivedAt.set(tag, nowMs());
      const r = await runtime.deliver(m);
      if (tag) queuedAt.set(tag, nowMs());
      if (tag && r.status === "queued") idleAt.set(tag, r.idle);
      // The gateway's acknowledgement once the delivery is durable (a private chat: the typing action).
      if (r.status === "queued")
        await acknowledgeDelivery(adapter, m, { idle: r.idle, log: silentProcessLogger() });
      if (r.status !== "queued") errors.push(`deliver ${m.eventId}: ${r.status}`);
    },
    onReaction: () => {},
    onCommand: () => {},
  });
  // Polling is live once the fake holds a getUpdates request.
  const deadline = Date.now() + 10_000;
  while (!fake.calls.some((c) => c.method === "getUpdates")) {
    if (Date.now() > deadline) throw new Error("pipeline: the adapter did not start polling within 10 s.");
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    mode: o.mode,
    fake,
    model,
    runtime,
    adapter,
    prefix,
    receivedAt,
    queuedAt,
    idleAt,
    errors,
    inject(chatId, text) {
      const at = nowMs();
      fake.userMessage({ ...chatOf(chatId), text });
      return at;
    },
    outbound: () => fake.calls.filter((c) => !SETUP.has(c.method)),
    async close() {
      await adapter.stop();
      await runtime.stop({ graceMs: 1000 });
      await fake.close();
      if (redis) {
        await redis.quit().catch(() => {});
      }
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until `done()` holds, polling every 10 ms; throws after `timeoutMs`. */
export async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
