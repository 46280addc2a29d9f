/**
 * The `ExtensionHost` contract, run by the production host (`ThreadHost` over the embedded runtime,
 * its session store and a recording channel adapter) and by `MemoryHost`, the in-memory host the
 * extension tests use, so what those tests show about commands and approvals holds for the real
 * host. A host shows chat operations in the thread, answers the invoker, keeps settings, delivers
 * messages into the conversation, persists custom entries once the thread has a session, and
 * reports and controls an idle thread without failing.
 *
 * `make()` returns the host and what the test reads back: the chat (text and reactions of a message,
 * replies to the invoker), the messages the conversation received and the custom entries persisted,
 * `settle()` (every delivered message processed), the deployment's default model and the channel's
 * delivery mode.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ExtensionHost } from "../../src/extensions/types.js";

export interface HostWorld {
  host: ExtensionHost;
  text(ref: string): string | undefined;
  reactions(ref: string): string[];
  replies(): string[];
  /** The texts the conversation received as user messages, in order. */
  received(): Promise<string[]>;
  entries(): Promise<{ customType: string; data: unknown }[]>;
  settle(): Promise<void>;
  defaultModel: string | undefined;
  queueMode: string;
  close(): Promise<void>;
}

export function extensionHostContract(name: string, make: () => Promise<HostWorld>): void {
  describe(`ExtensionHost contract: ${name}`, () => {
    let world: HostWorld | undefined;
    const open = async () => {
      world = await make();
      return world;
    };
    afterEach(async () => {
      await world?.close();
      world = undefined;
    });

    it("posts, edits and reacts in the thread", async () => {
      const w = await open();
      const ref = await w.host.post("Approval needed: `rm -rf build`", { format: "markdown" });
      expect(w.text(ref)).toBe("Approval needed: `rm -rf build`");
      await w.host.edit(ref, "Approved by alice.");
      expect(w.text(ref)).toBe("Approved by alice.");
      await w.host.react(ref, "✅");
      expect(w.reactions(ref)).toContain("✅");
      const second = await w.host.post("another");
      expect(second).not.toBe(ref);
    });

    it("answers the person who issued a command", async () => {
      const w = await open();
      await w.host.reply("Model set to alpha/one.");
      expect(w.replies()).toContain("Model set to alpha/one.");
    });

    it("describes the thread it is bound to", async () => {
      const w = await open();
      expect(w.host.thread.threadKey).toMatch(/\S/);
      expect(w.host.thread.user?.id).toBeTruthy();
    });

    it("reports the default model for a thread without settings, and keeps what is set", async () => {
      const w = await open();
      expect(await w.host.getSettings()).toEqual({ model: w.defaultModel, thinkingLevel: undefined });
      await w.host.setModel("beta/two");
      await w.host.setThinkingLevel("high");
      expect(await w.host.getSettings()).toEqual({ model: "beta/two", thinkingLevel: "high" });
    });

    it("delivers messages and custom messages into the conversation", async () => {
      const w = await open();
      await w.host.deliver("first message", "followUp");
      await w.settle();
      await w.host.sendMessage(
        { role: "custom", customType: "note", content: "a note", display: true, timestamp: 1 },
        "followUp",
      );
      await w.settle();
      expect(await w.received()).toEqual(["first message", "a note"]);
    });

    it("persists custom entries in the thread's session", async () => {
      const w = await open();
      await w.host.deliver("start a session", "followUp");
      await w.settle();
      await w.host.appendEntry("approval", { id: "a7k2qx", decision: "approved" });
      expect(await w.entries()).toContainEqual({
        customType: "approval",
        data: { id: "a7k2qx", decision: "approved" },
      });
    });

    it("reports an idle thread and controls it without failing", async () => {
      const w = await open();
      const status = await w.host.status();
      expect(status).toMatchObject({ running: false, inboxDepth: 0, queueMode: w.queueMode });
      expect(status.usage).toEqual(
        expect.objectContaining({
          input: expect.any(Number),
          output: expect.any(Number),
          cost: expect.any(Number),
        }),
      );
      expect(await w.host.stop()).toMatchObject({ wasRunning: false, discarded: 0 });
      expect(await w.host.newSession()).toMatchObject({ wasRunning: false, discarded: 0 });
      const compact = await w.host.compact("keep the numbers");
      expect(compact.compacted || compact.queued === true || typeof compact.reason === "string").toBe(true);
    });
  });
}
