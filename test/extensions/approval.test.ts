import { Type } from "@sinclair/typebox";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApprovalExtension } from "../../src/extensions/approval/extension.js";
import { bashApprovalRule } from "../../src/extensions/approval/rules.js";
import type { ApprovalStore } from "../../src/extensions/approval/types.js";
import { createCommandsExtension } from "../../src/extensions/commands/index.js";
import { silentLogger } from "../../src/extensions/logger.js";
import { ExtensionRunner } from "../../src/extensions/runner.js";
import type { ApprovalRule, ExtensionEntry, ExtensionTool } from "../../src/extensions/types.js";
import { MemoryApprovalStore } from "../../src/queue/approvals/memory-store.js";
import { RedisApprovalStore } from "../../src/queue/approvals/redis-store.js";
import { ManualClock } from "../support/manual-clock.js";
import { connectRedis, uniquePrefix } from "../support/redis.js";
import { createHarness, type HarnessOptions } from "./support/harness.js";
import { MemoryHost } from "./support/memory-host.js";

const T0 = Date.UTC(2024, 4, 1, 14, 0, 0);
const TEN_MIN = 10 * 60 * 1000;
const THREAD = { threadKey: "slack:T1:C1:1714572000.1", platform: "slack" };
const ADMIN = { id: "UADMIN", name: "bob", isBot: false };
const OTHER = { id: "U2", name: "carol", isBot: false };
const isAdmin = (platform: string, userId: string) => platform === "slack" && userId === ADMIN.id;

/** A tool that records what it ran. */
function dangerTool(approval: ApprovalRule = "always", name = "danger"): ExtensionTool & { ran: string[] } {
  const ran: string[] = [];
  return {
    name,
    label: name,
    description: "does something dangerous",
    parameters: Type.Object({ command: Type.String() }),
    approval,
    ran,
    async execute(_id, params) {
      const command = (params as { command: string }).command;
      ran.push(command);
      return { content: [{ type: "text", text: `ran ${command}` }], details: {} };
    },
  };
}

const callTool = (command: string, name = "danger", id?: string) => ({
  toolCalls: [{ name, args: { command }, ...(id ? { id } : {}) }],
});

/**
 * Waits until `cond` holds, looking at every event-loop turn. Bounded by a generous wall-clock limit,
 * not a count of turns: with Redis replies in between, a loaded machine needs many more turns.
 */
async function waitUntil(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface SetupOptions {
  tool?: ExtensionTool & { ran: string[] };
  replies?: HarnessOptions["replies"];
  store?: ApprovalStore;
  /** Store of the gateway process (default: the worker's). */
  gatewayStore?: ApprovalStore;
  rules?: Record<string, ApprovalRule>;
  mustAsk?: (toolName: string) => boolean;
  hasAdmins?: (platform: string) => boolean;
}

async function setup(options: SetupOptions = {}) {
  const clock = new ManualClock(T0);
  const store = options.store ?? new MemoryApprovalStore();
  const tool = options.tool ?? dangerTool();
  const approvalEntry = (s: ApprovalStore): ExtensionEntry => ({
    name: "approval",
    factory: createApprovalExtension({
      store: s,
      isAdmin,
      clock,
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.mustAsk ? { mustAsk: options.mustAsk } : {}),
      ...(options.hasAdmins ? { hasAdmins: options.hasAdmins } : {}),
    }),
  });
  const commands: ExtensionEntry = { name: "commands", factory: createCommandsExtension() };
  // The worker: the agent, its host (where the request is posted) and the gate.
  const worker = await createHarness([approvalEntry(store), commands], {
    host: new MemoryHost({ ...THREAD, user: { id: "U1", name: "alice" } }),
    baseTools: [tool],
    replies: options.replies ?? [callTool("rm -rf build"), "finished"],
  });
  // A gateway process: its own runner and host for the same thread, where reactions and commands arrive.
  const gatewayRunner = new ExtensionRunner({ logger: silentLogger });
  await gatewayRunner.load([approvalEntry(options.gatewayStore ?? store), commands]);
  const gatewayHost = new MemoryHost({ ...THREAD, user: ADMIN });
  const gateway = gatewayRunner.bind(gatewayHost);
  const gatewayAs = (user: { id: string; name?: string }) => gatewayRunner.bind(gatewayHost.as(user));

  const request = async () => {
    await waitUntil(() => (worker.host.messages[0]?.reactions.length ?? 0) === 3, "the approval request");
    await waitUntil(() => clock.pending > 0, "the approval timeout to be armed");
    const message = worker.host.messages[0];
    if (!message) throw new Error("no request");
    const id = /\/approve ([a-z2-9]{6})/.exec(message.versions[0] ?? "")?.[1] ?? "";
    return { ref: message.ref, id, text: message.versions[0] ?? "", message };
  };
  const react = (ref: string, emoji: string, user: { id: string; name: string; isBot: boolean }) =>
    gateway.handleReaction({ messageRef: ref, emoji, user, added: true });
  return { clock, store, tool, worker, gateway, gatewayRunner, gatewayHost, gatewayAs, request, react };
}

describe("approval by reaction", () => {
  it("posts a request with the tool, arguments, requester, expiry and the command fallback, and adds ✅ ❌ ♾️", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { text, message, id } = await s.request();
    expect(text).toContain("🔐 Approval needed: `danger`");
    expect(text).toContain('```json\n{\n  "command": "rm -rf build"\n}\n```');
    expect(text).toContain("Run triggered by alice.");
    expect(text).toContain("Expires at 14:10 UTC (10 min); no decision by then is a denial.");
    expect(text).toContain(`reply in this thread with /approve ${id} or /deny ${id}`);
    expect(message.reactions).toEqual(["✅", "❌", "♾️"]);
    await s.react(message.ref, "❌", ADMIN);
    await running;
  });

  it("a non-admin's ✅ and the bot's own reactions do nothing; an admin's ✅ runs the tool", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { ref, id } = await s.request();
    expect(await s.react(ref, "✅", OTHER)).toBe(true);
    expect(await s.react(ref, "✅", { id: "UBOT", name: "switchboard", isBot: true })).toBe(true);
    expect((await s.store.get(id))?.status).toBe("pending");
    expect(s.tool.ran).toEqual([]);

    await s.clock.advance(2 * 60 * 1000);
    await s.react(ref, "✅", ADMIN);
    await running;
    expect(s.tool.ran).toEqual(["rm -rf build"]);
    expect(s.worker.toolResults()[0]?.isError).toBe(false);
    const versions = s.worker.host.messages[0]?.versions ?? [];
    expect(versions).toHaveLength(2);
    expect(versions[1]).toContain("✅ Approved by bob at 14:02 UTC.");
    expect(versions[1]).not.toContain("/approve");
    expect(s.worker.host.entries).toEqual([
      {
        customType: "approval",
        data: expect.objectContaining({
          id,
          toolName: "danger",
          args: { command: "rm -rf build" },
          outcome: "approved",
          requestedBy: { id: "U1", name: "alice" },
          decidedBy: { id: "UADMIN", name: "bob" },
          decidedAt: T0 + 2 * 60 * 1000,
        }),
      },
    ]);
  });

  it("an admin's ✅ that arrives before the request's message id is stored still decides", async () => {
    let releaseAttach: () => void = () => {};
    const attached = new Promise<void>((r) => {
      releaseAttach = r;
    });
    const store = new MemoryApprovalStore();
    const attach = store.attachMessage.bind(store);
    store.attachMessage = async (id, ref) => {
      await attached;
      await attach(id, ref);
    };
    const s = await setup({ store });
    const running = s.worker.run("clean up");
    await waitUntil(() => s.worker.host.messages.length === 1, "the request message");
    const ref = s.worker.host.messages[0]?.ref ?? "";
    const reacted = s.react(ref, "✅", ADMIN);
    await waitUntil(() => s.clock.pending > 0, "the reaction to wait for the message id");
    releaseAttach();
    await s.clock.advance(100);
    expect(await reacted).toBe(true);
    await running;
    expect(s.tool.ran).toEqual(["rm -rf build"]);
  });

  it("an admin's ❌ gives the model an error result saying so", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { ref } = await s.request();
    await s.react(ref, "❌", ADMIN);
    await running;
    expect(s.tool.ran).toEqual([]);
    const result = s.worker.toolResults()[0];
    expect(result?.isError).toBe(true);
    expect(s.worker.resultText(result)).toBe(
      "An admin (bob) denied this danger call, so it was not run. Do not retry it unless the user asks you to.",
    );
    expect(s.worker.stream.calls[1]?.context.messages.at(-1)).toMatchObject({
      role: "toolResult",
      isError: true,
    });
    expect(s.worker.host.messages[0]?.versions[1]).toContain("❌ Denied by bob at 14:00 UTC.");
    expect(s.worker.host.entries[0]?.data).toMatchObject({ outcome: "denied" });
  });

  it("no decision within the timeout is a denial (fake clock, no sleeping)", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    await s.request();
    await s.clock.advance(TEN_MIN - 1);
    expect(s.worker.toolResults()).toHaveLength(0);
    await s.clock.advance(1);
    await running;
    expect(s.tool.ran).toEqual([]);
    expect(s.worker.resultText(s.worker.toolResults()[0])).toBe(
      "No admin approved this danger call within 10 min, so it was denied and not run.",
    );
    expect(s.worker.host.messages[0]?.versions[1]).toContain(
      "⌛ Expired at 14:10 UTC: no admin decided within 10 min",
    );
    expect(s.worker.host.entries[0]?.data).toMatchObject({ outcome: "expired" });
  });

  it("♾️ approves and remembers that exact call for the rest of the thread", async () => {
    const s = await setup({
      replies: [
        callTool("deploy prod", "danger", "c1"),
        callTool("deploy prod", "danger", "c2"),
        callTool("deploy staging", "danger", "c3"),
        "done",
      ],
    });
    const running = s.worker.run("deploy");
    const first = await s.request();
    await s.react(first.ref, "♾️", ADMIN);
    // The identical second call runs without a new request; the different third one asks again.
    await waitUntil(() => s.worker.host.messages.length === 2, "a second request");
    expect(s.tool.ran).toEqual(["deploy prod", "deploy prod"]);
    const second = s.worker.host.messages[1];
    expect(second?.versions[0]).toContain("deploy staging");
    await waitUntil(() => (second?.reactions.length ?? 0) === 3, "reactions on the second request");
    await s.react(second?.ref ?? "", "❌", ADMIN);
    await running;
    expect(s.tool.ran).toEqual(["deploy prod", "deploy prod"]);
    expect(s.worker.host.messages[0]?.versions[1]).toContain("♾️ Approved by bob");
    expect(s.worker.host.entries.map((e) => e.data as { outcome: string; remembered?: boolean })).toEqual([
      expect.objectContaining({ outcome: "approved_always" }),
      expect.objectContaining({ outcome: "approved_always", remembered: true }),
      expect.objectContaining({ outcome: "denied" }),
    ]);
  });

  it("/approve and /deny work where reactions cannot reach the bot, for admins only", async () => {
    const s = await setup({
      replies: [callTool("one", "danger", "c1"), callTool("two", "danger", "c2"), "done"],
    });
    const running = s.worker.run("go");
    const first = await s.request();
    const carol = s.gatewayAs(OTHER);
    await carol.runCommand("approve", first.id);
    expect(s.gatewayHost.lastReply()).toBe("Only admins of slack can decide approval requests.");
    await s.gateway.runCommand("approve", "nope");
    expect(s.gatewayHost.lastReply()).toContain("Usage: /approve <id>");
    await s.gateway.runCommand("approve", "zzzzzz");
    expect(s.gatewayHost.lastReply()).toBe("There is no approval request zzzzzz.");
    await s.gateway.runCommand("approve", first.id);
    expect(s.gatewayHost.lastReply()).toBe(`Approved ${first.id} (danger).`);
    await waitUntil(() => s.worker.host.messages.length === 2, "the second request");
    const secondId = /\/approve ([a-z2-9]{6})/.exec(s.worker.host.messages[1]?.versions[0] ?? "")?.[1] ?? "";
    await waitUntil(
      async () => (await s.store.get(secondId))?.messageRef !== undefined,
      "the second request stored",
    );
    await s.gateway.runCommand("deny", secondId);
    await running;
    expect(s.tool.ran).toEqual(["one"]);
    await s.gateway.runCommand("deny", first.id);
    expect(s.gatewayHost.lastReply()).toBe(`Approval request ${first.id} was already settled: approved.`);
  });

  it("/approve typed in another thread does not approve; the admin is told where to type it", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { id } = await s.request();
    const elsewhere = new MemoryHost({
      threadKey: "slack:T1:C9:1714572999.1",
      platform: "slack",
      user: ADMIN,
    });
    await s.gatewayRunner.bind(elsewhere).runCommand("approve", id);
    expect(elsewhere.lastReply()).toBe(
      `Approval request ${id} was asked in another thread; nothing changed. Type /approve ${id} in that thread (reply to the request).`,
    );
    expect((await s.store.get(id))?.status).toBe("pending");
    expect(s.tool.ran).toEqual([]);
    await s.gateway.runCommand("approve", id);
    await running;
    expect(s.tool.ran).toEqual(["rm -rf build"]);
  });

  it("the policy makes a call ask whatever its rule says (bash outside a sandbox)", async () => {
    const bash = dangerTool("never", "bash");
    const s = await setup({
      tool: bash,
      mustAsk: (tool) => tool === "bash",
      replies: [callTool("ls -la", "bash", "c1"), "done"],
    });
    const running = s.worker.run("go");
    const { text, ref } = await s.request();
    expect(text).toContain("ls -la");
    expect(bash.ran).toEqual([]);
    await s.react(ref, "✅", ADMIN);
    await running;
    expect(bash.ran).toEqual(["ls -la"]);
  });

  it("a policy that throws counts as ask", async () => {
    const bash = dangerTool("never", "bash");
    const s = await setup({
      tool: bash,
      mustAsk: () => {
        throw new Error("policy broken");
      },
      replies: [callTool("ls", "bash", "c1"), "done"],
    });
    const running = s.worker.run("go");
    const { ref } = await s.request();
    await s.react(ref, "❌", ADMIN);
    await running;
    expect(bash.ran).toEqual([]);
  });

  it("a call that must ask on a platform without admins is refused at once, saying why", async () => {
    const s = await setup({ hasAdmins: () => false });
    await s.worker.run("clean up");
    expect(s.tool.ran).toEqual([]);
    expect(s.worker.host.messages).toHaveLength(0);
    expect(s.worker.resultText(s.worker.toolResults()[0])).toContain(
      "slack has no admin configured (channels.slack.admins)",
    );
  });

  it("/stop cancels a pending approval", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { id } = await s.request();
    s.gatewayHost.running = true;
    expect(await s.gateway.runCommand("stop", "")).toBe(true);
    expect(s.gatewayHost.lastReply()).toBe(`⏹️ Stopped.\nCancelled pending approval ${id} (danger).`);
    await running;
    expect(s.tool.ran).toEqual([]);
    expect(s.worker.resultText(s.worker.toolResults()[0])).toContain(
      "was cancelled because the run was stopped",
    );
    expect(s.worker.host.messages[0]?.versions[1]).toContain("⏹️ Cancelled at 14:00 UTC by bob");
    expect(s.worker.host.entries[0]?.data).toMatchObject({ outcome: "cancelled" });
  });

  it("aborting the run cancels its pending approval", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { id } = await s.request();
    s.worker.agent.abort();
    await running;
    expect((await s.store.get(id))?.status).toBe("cancelled");
    expect(s.worker.host.messages[0]?.versions[1]).toContain("⏹️ Cancelled");
    expect(s.tool.ran).toEqual([]);
  });

  it("bash patterns from config decide which commands ask", async () => {
    const bash = dangerTool("never", "bash");
    const s = await setup({
      tool: bash,
      rules: { bash: bashApprovalRule(["\\brm\\b", "^git push"]) },
      replies: [callTool("ls -la", "bash", "c1"), callTool("rm -rf /tmp/x", "bash", "c2"), "done"],
    });
    const running = s.worker.run("go");
    const { text, ref } = await s.request();
    expect(bash.ran).toEqual(["ls -la"]);
    expect(text).toContain("rm -rf /tmp/x");
    await s.react(ref, "✅", ADMIN);
    await running;
    expect(bash.ran).toEqual(["ls -la", "rm -rf /tmp/x"]);
  });

  it("fails closed when the request cannot be posted", async () => {
    const s = await setup();
    s.worker.host.chatFailing = new Error("slack is down");
    await s.worker.run("clean up");
    expect(s.tool.ran).toEqual([]);
    expect(s.worker.resultText(s.worker.toolResults()[0])).toBe(
      "This danger call needs an admin's approval, but the request failed (slack is down); it was not run.",
    );
    expect(s.worker.runner.extensions().every((e) => e.enabled)).toBe(true);
  });
});

describe("approval requests a dead worker left", () => {
  it("the next worker to build the thread's agent cancels the request once and its message says so", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { id, message } = await s.request();
    // Another worker process takes the thread (the first one died waiting): its agent is built.
    const next = new ExtensionRunner({ logger: silentLogger });
    await next.load([
      { name: "approval", factory: createApprovalExtension({ store: s.store, isAdmin, clock: s.clock }) },
    ]);
    const thread = next.bind(s.worker.host);
    // The session start does not wait for the closing (it is off the first model call's path).
    await thread.emitSession({ type: "session_start", sessionId: "s2" });
    await vi.waitFor(() => expect(message.versions.at(-1)).toContain("⏹️ Cancelled at"));
    expect((await s.store.get(id))?.status).toBe("cancelled");
    const edits = message.versions.length;
    // Building it again (two more starts at once) finds nothing pending: no second edit.
    await thread.emitSession({ type: "session_start", sessionId: "s3" });
    await thread.emitSession({ type: "session_start", sessionId: "s4" });
    // The memory store and the test host do no I/O: one turn of the event loop runs both closings.
    await new Promise((resolve) => setImmediate(resolve));
    expect(message.versions).toHaveLength(edits);
    // The first worker's wait (a zombie here) ends with the decision; the call was not run.
    await running;
    expect(s.tool.ran).toEqual([]);
  });

  it("a request made after the thread's agent was built (a budget request) is left alone", async () => {
    const s = await setup();
    const record = await s.store.create({
      threadKey: s.worker.host.thread.threadKey,
      platform: s.worker.host.thread.platform,
      toolName: "budget",
      args: {},
      fingerprint: "budget:fresh",
      createdAt: s.clock.now() + 1,
      expiresAt: s.clock.now() + TEN_MIN,
    });
    await s.worker.thread.emitSession({ type: "session_start", sessionId: "again" });
    await new Promise((resolve) => setImmediate(resolve));
    expect((await s.store.get(record.id))?.status).toBe("pending");
  });

  it("a request the process's own run waits on is left alone", async () => {
    const s = await setup();
    const running = s.worker.run("clean up");
    const { id } = await s.request();
    await s.worker.thread.emitSession({ type: "session_start", sessionId: "again" });
    expect((await s.store.get(id))?.status).toBe("pending");
    s.clock.advance(TEN_MIN);
    await running;
  });
});

describe("approval across processes (Redis)", () => {
  it("a reaction received by another gateway process, on its own connection, reaches the waiting worker", async () => {
    const prefix = uniquePrefix();
    const workerRedis = connectRedis();
    const gatewayRedis = connectRedis();
    const workerStore = new RedisApprovalStore(workerRedis, { prefix });
    const gatewayStore = new RedisApprovalStore(gatewayRedis, { prefix });
    closers.push(async () => {
      await workerStore.close();
      await gatewayStore.close();
      await workerRedis.quit();
      await gatewayRedis.quit();
    });
    const s = await setup({ store: workerStore, gatewayStore });
    const running = s.worker.run("clean up");
    const { ref } = await s.request();
    expect(await s.react(ref, "✅", OTHER)).toBe(true);
    expect(await s.react(ref, "✅", ADMIN)).toBe(true);
    await running;
    expect(s.tool.ran).toEqual(["rm -rf build"]);
    expect(s.worker.host.messages[0]?.versions[1]).toContain("✅ Approved by bob");
  });
});
