/**
 * Two workers over one thread on a test clock, for the recovery tests of approval requests and
 * notices: the real approval extension on the worker's thread host, the real renderer on a
 * recording chat (or a real adapter over its wire fake), the render journal and the approval store
 * in memory. Each worker's view of them is `Mortal`: once it dies, none of its calls comes back.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { expect } from "vitest";
import { MemoryRateLimiter } from "../../../src/adapters/render/rate-limiter.js";
import type { ChannelAdapter, Platform } from "../../../src/adapters/types.js";
import { Agent } from "../../../src/agent/agent.js";
import { silentLogger } from "../../../src/agent/logger.js";
import { convertToLlm } from "../../../src/agent/session/messages.js";
import { createApprovalExtension } from "../../../src/extensions/approval/extension.js";
import type { ApprovalStore } from "../../../src/extensions/approval/types.js";
import { ExtensionRunner } from "../../../src/extensions/runner.js";
import type { ExtensionTool } from "../../../src/extensions/types.js";
import { ThreadHost } from "../../../src/gateway/app/thread-host.js";
import type { Logger } from "../../../src/gateway/log.js";
import { MemoryApprovalStore } from "../../../src/queue/approvals/memory-store.js";
import { MemoryThreadState } from "../../../src/queue/embedded/memory-thread-state.js";
import { MemoryRenderJournal } from "../../../src/queue/state/render-journal.js";
import { FileSessionStore } from "../../../src/queue/store/file-store.js";
import type { AgentFactory, Runtime } from "../../../src/queue/types.js";
import { RecordingAdapter } from "../../adapters/support/recording-adapter.js";
import { ManualClock } from "../../support/manual-clock.js";
import { lastUserText, ScriptedStream } from "../../support/scripted-stream.js";
import { inbound, resolveTestModel } from "./harness.js";
import { type Death, Mortal } from "./mortal.js";
import { recoveryWorkerCore, runClockUntil } from "./recovery-worker.js";

const TTL = 900;
const T = "web:approval";
export const REQUEST = "🔐 Approval needed: `danger`";
export const STOPPED = "⏹️ Cancelled: the worker waiting for this decision stopped, so the call was not run.";

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

/** Closes what `onCleanup` was given and removes the clusters' directories (call in `afterEach`). */
export async function cleanupClusters(): Promise<void> {
  for (const close of closers.splice(0)) await close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** `close` runs at the next `cleanupClusters`. */
export function onCleanup(close: () => Promise<void>): void {
  closers.push(close);
}

/** A tool that needs approval and records what it ran. */
function dangerTool(ran: string[]): ExtensionTool {
  return {
    name: "danger",
    label: "danger",
    description: "does something dangerous",
    parameters: Type.Object({ command: Type.String() }),
    approval: "always",
    async execute(_id, params) {
      ran.push((params as { command: string }).command);
      return { content: [{ type: "text", text: "ran" }], details: {} };
    },
  };
}

/** Calls `danger` for a user message, then answers `ack <question>`. */
export const toolFirst = () =>
  new ScriptedStream((call) => {
    const last = call.context.messages.at(-1);
    if (last?.role === "user") return { toolCalls: [{ name: "danger", args: { command: "rm x" } }] };
    return `ack ${lastUserText(call)}`;
  });

/** The request's post (text) or an edit of it. */
export const requestCall = (method: string, args: unknown[]) =>
  (method === "post" && String(args[1]).startsWith(REQUEST)) ||
  (method === "edit" && String(args[1]).startsWith(REQUEST));

/** A real platform adapter over a wire fake, instead of the recording chat. */
export interface Wire {
  adapter: ChannelAdapter;
  clock: ManualClock;
  threadKey: string;
  platform: Platform;
  /** The bot's messages in the thread as a user sees them, oldest first. */
  shown(): string[];
}

export function cluster(o: { findPosted?: boolean; idempotentPosts?: boolean; wire?: Wire } = {}) {
  const clock = o.wire?.clock ?? new ManualClock(Date.UTC(2024, 4, 1, 14, 0, 0));
  const t = o.wire?.threadKey ?? T;
  const state = new MemoryThreadState({ clock });
  const dir = mkdtempSync(join(tmpdir(), "sb-approval-"));
  dirs.push(dir);
  const store = new FileSessionStore({
    dataDir: dir,
    fenceCheck: (threadKey, fence) => state.holds(threadKey, fence.token),
  });
  const journal = new MemoryRenderJournal({ holds: (t, token) => state.holds(t, token) });
  const chat = new RecordingAdapter(clock, o.idempotentPosts ? { idempotentPosts: true } : {}, {
    findPosted: o.findPosted === true,
  });
  const approvals = new MemoryApprovalStore();
  const limiter = new MemoryRateLimiter(clock);
  const errors: string[] = [];
  const ran: string[] = [];
  const worker = (name: string, stream: ScriptedStream, death?: Death) => {
    const mortal = new Mortal(death);
    const adapter = mortal.wrap<ChannelAdapter>(o.wire?.adapter ?? chat);
    const runner = new ExtensionRunner({ logger: silentLogger });
    const loaded = runner.load([
      {
        name: "approval",
        factory: createApprovalExtension({
          store: mortal.wrap<ApprovalStore>(approvals),
          isAdmin: (_p, id) => id === "UADMIN",
          clock,
        }),
      },
    ]);
    const factory: AgentFactory = async (ctx) => {
      await loaded;
      const host = new ThreadHost(
        {
          runtime: {} as Runtime,
          store,
          adapterOf: () => adapter,
          defaultModel: () => undefined,
          logger: silentLogger as unknown as Logger,
        },
        {
          threadKey: ctx.threadKey,
          platform: o.wire?.platform ?? "web",
          user: () => ({ id: "U1", name: "alice" }),
          ...(ctx.appendEntry ? { appendEntry: ctx.appendEntry } : {}),
          ...(ctx.renderLog ? { renderLog: ctx.renderLog } : {}),
        },
      );
      const thread = runner.bind(host);
      const agent = new Agent({
        initialState: {
          model: resolveTestModel("scripted/scripted-1") as NonNullable<ReturnType<typeof resolveTestModel>>,
          thinkingLevel: "off",
          messages: ctx.messages,
          tools: thread.tools([dangerTool(ran)]),
        },
        streamFn: stream.streamFn,
        convertToLlm,
        ...thread.agentHooks(),
      });
      thread.attach(agent);
      return { agent, onSessionEvent: (event) => thread.emitSession(event) };
    };
    const core = recoveryWorkerCore({
      name,
      mortal,
      adapter,
      state,
      store,
      journal,
      clock,
      limiter,
      factory,
      leaseTtlMs: TTL,
      errors,
    });
    return { core, mortal };
  };
  const deliver = (text: string) =>
    state.append(
      t,
      { mode: "steer", kind: "message", message: inbound(t, text) },
      { cap: 20, dropPolicy: "new" },
    );
  const runUntil = (done: Promise<unknown>) => runClockUntil(clock, done);
  /** Lets A's calls land (real file I/O) until `until` resolves, on a still clock. */
  const settle = async (until: Promise<unknown>) => {
    let over = false;
    void until.then(() => {
      over = true;
    });
    for (let i = 0; i < 2000 && !over; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(over).toBe(true);
  };
  /** The request messages the chat shows. */
  const shown = () => o.wire?.shown() ?? chat.messages();
  const requests = () => shown().filter((m) => m.startsWith(REQUEST));
  return {
    t,
    state,
    clock,
    chat,
    journal,
    approvals,
    errors,
    ran,
    worker,
    deliver,
    runUntil,
    settle,
    shown,
    requests,
  };
}
