/**
 * The adapter contract suite: what every chat platform adapter must do, checked against the
 * platform's fake server with the real SDK. A platform plugs in by writing a `ContractHarness`
 * factory (see test/adapters/telegram/harness.ts) and calling
 * `runAdapterContract("slack", () => createSlackHarness())` from a test file.
 *
 * Time: the renderer and the fake's flood control run on the harness's `ManualClock`, so throttling
 * and 429 waits are checked deterministically; inbound delivery uses real I/O and is awaited with
 * bounded polls.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import { RunRenderer } from "../../src/adapters/render/run-renderer.js";
import type {
  AttachmentRef,
  ChannelAdapter,
  InboundCommand,
  InboundHandlers,
  InboundMessage,
  InboundReaction,
  MessageRef,
  Platform,
} from "../../src/adapters/types.js";
import type { ManualClock } from "../support/manual-clock.js";
import { streamedText } from "./support/agent-events.js";
import { driveUntil, settle, until } from "./support/drive.js";

/** What the adapter delivered, in order. */
export class Received implements InboundHandlers {
  readonly messages: InboundMessage[] = [];
  readonly reactions: InboundReaction[] = [];
  readonly commands: InboundCommand[] = [];
  onMessage(m: InboundMessage): void {
    this.messages.push(m);
  }
  onReaction(r: InboundReaction): void {
    this.reactions.push(r);
  }
  onCommand(c: InboundCommand): void {
    this.commands.push(c);
  }
}

/** A message a (fake) user wrote; `id` is the harness's own handle. */
export interface UserMessage {
  id: string;
}

/** One message of a thread as a user sees it. */
export interface VisibleMessage {
  text: string;
  fromBot: boolean;
}

export interface ContractHarness {
  readonly platform: Platform;
  /** Started with `received` as its handlers. */
  readonly adapter: ChannelAdapter;
  readonly received: Received;
  /** Drives the renderer and the fake platform's rate limits. */
  readonly clock: ManualClock;
  /** A user writes in a group channel; `replyTo` puts it in that message's thread / reply chain. */
  groupMessage(opts: {
    text: string;
    mention?: boolean;
    replyTo?: UserMessage;
    user?: string;
  }): Promise<UserMessage>;
  /** A user writes to the bot directly. */
  directMessage(text: string): Promise<UserMessage>;
  /** A user reacts to a message the bot posted. `emoji` is a seam emoji ("✅"); the harness maps it. */
  react(ref: MessageRef, emoji: string): Promise<void>;
  /** A user runs a native command. */
  command(name: string, args: string): Promise<void>;
  /** The platform delivers its last event again (retry, resume, redelivery). */
  redeliverLast(): Promise<void>;
  /** The thread as a user sees it, oldest first. */
  thread(threadKey: string): VisibleMessage[];
  /** Successful edits of one bot message: fake-clock time and visible text. */
  edits(ref: MessageRef): Array<{ at: number; text: string }>;
  /** A user posts a file with `text` to the bot in a group channel (platforms with files). */
  fileMessage?(opts: { text: string; name: string; bytes: Buffer; mimeType: string }): Promise<UserMessage>;
  /** The files the bot posted into a thread, as a user downloads them, with the text shown beside. */
  botFiles?(threadKey: string): Array<{ name: string; bytes: Buffer; caption: string }>;
  /** The next `count` posts/edits are refused with 429 and this retry-after. */
  rateLimitStorm(count: number, retryAfterMs: number): void;
  /** How many requests the fake refused with 429 so far. */
  rateLimited(): number;
  close(): Promise<void>;
}

const paragraphs = (count: number, size: number) =>
  Array.from({ length: count }, (_, i) => `Paragraph ${i}: ${"lorem ipsum ".repeat(size / 12)}`.trim()).join(
    "\n\n",
  );

async function render(
  h: ContractHarness,
  threadKey: string,
  deltas: string[],
  between?: () => Promise<void>,
) {
  const renderer = new RunRenderer({
    adapter: h.adapter,
    threadKey,
    clock: h.clock,
    limiter: new MemoryRateLimiter(h.clock),
  });
  renderer.onEvent({ type: "agent_start" });
  for (const e of streamedText(deltas)) {
    renderer.onEvent(e);
    if (between && e.type === "message_update") {
      await settle(() => renderer.busy);
      await between();
    }
  }
  renderer.onEvent({ type: "agent_end", messages: [] });
  await driveUntil(h.clock, renderer.close(), { busy: () => renderer.busy, stepMs: 250 });
  return renderer;
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of body) out.push(Buffer.from(chunk));
  return out;
}

/** Run the contract against one platform. `make` builds a fresh, started harness per test. */
export function runAdapterContract(name: string, make: () => Promise<ContractHarness>): void {
  describe(`${name} adapter contract`, () => {
    let h: ContractHarness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.close();
    });

    const waitFor = (what: string, cond: () => boolean) => until(cond, 5000, what);

    it("answers a mention in the thread of the mention", async () => {
      await h.groupMessage({ text: "what time is it?", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      expect(m).toMatchObject({
        platform: h.platform,
        text: "what time is it?",
        mentioned: true,
        isDirect: false,
      });
      expect(m.eventId).toMatch(new RegExp(`^${h.platform}:`));
      await h.adapter.post(m.threadKey, "It is noon.");
      expect(h.thread(m.threadKey)).toEqual([
        { text: expect.stringContaining("what time is it?"), fromBot: false },
        { text: "It is noon.", fromBot: true },
      ]);
    });

    it("answers a direct message", async () => {
      await h.directMessage("hello bot");
      await waitFor("the DM", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      expect(m).toMatchObject({ text: "hello bot", mentioned: true, isDirect: true });
      await h.adapter.post(m.threadKey, "Hello, human.");
      expect(h.thread(m.threadKey).at(-1)).toEqual({ text: "Hello, human.", fromBot: true });
    });

    it("finds a post again by its idempotency key where the platform can (else shows it twice, as Telegram)", async () => {
      await h.groupMessage({ text: "key test", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      await h.directMessage("key test too");
      await waitFor("the DM", () => h.received.messages.length === 2);
      const dm = h.received.messages[1] as InboundMessage;
      for (const [threadKey, replyTo] of [
        [m.threadKey, m.messageId],
        [dm.threadKey, undefined],
      ] as const) {
        const key = `k${threadKey.length}${Date.now().toString(36)}`;
        const opts = { idempotencyKey: key, ...(replyTo ? { replyTo } : {}) };
        const ref = await h.adapter.post(threadKey, "Once.", opts);
        const find = h.adapter.findPosted?.bind(h.adapter);
        if (find) {
          // Slack: found by its metadata; an unknown key finds nothing.
          expect(await find(threadKey, key, replyTo ? { replyTo } : {})).toBe(ref);
          expect(await find(threadKey, `${key}x`, replyTo ? { replyTo } : {})).toBeUndefined();
          continue;
        }
        const again = await h.adapter.post(threadKey, "Once.", opts);
        const shown = h.thread(threadKey).filter((x) => x.fromBot && x.text === "Once.");
        if (h.adapter.capabilities.idempotentPosts) {
          // Discord's nonce with enforce_nonce: the repeat returns the first message.
          expect(again).toBe(ref);
          expect(shown).toHaveLength(1);
        } else expect(shown).toHaveLength(2);
      }
    });

    it("posts an answer that replies to a later user message into the same thread, after that message", async () => {
      const first = await h.groupMessage({ text: "first question", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const m1 = h.received.messages[0] as InboundMessage;
      await h.adapter.post(m1.threadKey, "first answer");
      await h.groupMessage({ text: "second question", mention: true, replyTo: first });
      await waitFor("the second message", () => h.received.messages.length === 2);
      const m2 = h.received.messages[1] as InboundMessage;
      expect(m2.threadKey).toBe(m1.threadKey);
      await h.adapter.post(m1.threadKey, "second answer", { replyTo: m2.messageId });
      expect(h.thread(m1.threadKey).slice(-3)).toEqual([
        { text: "first answer", fromBot: true },
        { text: expect.stringContaining("second question"), fromBot: false },
        { text: "second answer", fromBot: true },
      ]);
    });

    it("keeps a reply in a direct conversation where the conversation is", async () => {
      await h.directMessage("one");
      await waitFor("the DM", () => h.received.messages.length === 1);
      await h.directMessage("two");
      await waitFor("the second DM", () => h.received.messages.length === 2);
      const [a, b] = h.received.messages as [InboundMessage, InboundMessage];
      expect(b.threadKey).toBe(a.threadKey);
      await h.adapter.post(a.threadKey, "answer to two", { replyTo: b.messageId });
      expect(h.thread(a.threadKey).at(-1)).toEqual({ text: "answer to two", fromBot: true });
    });

    it("ignores a group message that does not address the bot", async () => {
      await h.groupMessage({ text: "just chatting among ourselves" });
      await h.groupMessage({ text: "now for the bot", mention: true });
      await waitFor("the mention", () => h.received.messages.length >= 1);
      expect(h.received.messages.map((m) => m.text)).toEqual(["now for the bot"]);
    });

    it("delivers a reaction with the reference of the message reacted to", async () => {
      await h.groupMessage({ text: "approve this?", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const ref = await h.adapter.post(
        (h.received.messages[0] as InboundMessage).threadKey,
        "Run `rm -rf build`?",
      );
      await h.react(ref, "✅");
      await waitFor("the reaction", () => h.received.reactions.length === 1);
      expect(h.received.reactions[0]).toMatchObject({ messageId: ref, emoji: "✅", added: true });
      expect(h.received.reactions[0]?.threadKey).toBe((h.received.messages[0] as InboundMessage).threadKey);
    });

    it("delivers a native command with its arguments", async () => {
      await h.command("model", "claude-sonnet");
      await waitFor("the command", () => h.received.commands.length === 1);
      expect(h.received.commands[0]).toMatchObject({
        platform: h.platform,
        name: "model",
        args: "claude-sonnet",
      });
    });

    it("gives an event delivered twice by the platform the same event id (the runtime's claim dedupes it)", async () => {
      await h.groupMessage({ text: "once only", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      await h.redeliverLast();
      await h.groupMessage({ text: "second", mention: true });
      await waitFor("the next mention", () => h.received.messages.some((m) => m.text === "second"));
      const once = h.received.messages.filter((m) => m.text === "once only");
      expect(once.length).toBeGreaterThanOrEqual(1);
      expect(new Set(once.map((m) => m.eventId)).size).toBe(1);
      expect(h.received.messages.at(-1)?.text).toBe("second");
    });

    it("splits a 5,000-character reply into messages under the limit, losing nothing", async () => {
      await h.groupMessage({ text: "write a lot", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const threadKey = (h.received.messages[0] as InboundMessage).threadKey;
      const text = paragraphs(10, 500);
      expect(text.length).toBeGreaterThan(5000);
      await render(h, threadKey, [text]);
      const replies = h.thread(threadKey).filter((m) => m.fromBot);
      const minimum = Math.ceil(text.length / h.adapter.capabilities.maxMessageLength);
      expect(replies.length).toBeGreaterThanOrEqual(minimum);
      expect(replies.length).toBeLessThanOrEqual(minimum + 1);
      for (const r of replies)
        expect(r.text.length).toBeLessThanOrEqual(h.adapter.capabilities.maxMessageLength);
      expect(replies.map((r) => r.text).join("\n\n")).toBe(text);
    });

    it("streams 500 deltas with at most one edit per interval and ends with exactly the final text", async () => {
      await h.groupMessage({ text: "stream please", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const threadKey = (h.received.messages[0] as InboundMessage).threadKey;
      // 1,000 characters in all: under every platform's limit (Discord's 2,000), so one message.
      const deltas = Array.from({ length: 500 }, (_, i) => `${i % 10} `);
      const renderer = await render(h, threadKey, deltas, () => h.clock.advance(40));
      const final = deltas.join("").trim();
      const [ref] = renderer.replyRefs;
      expect(
        h
          .thread(threadKey)
          .filter((m) => m.fromBot)
          .map((m) => m.text),
      ).toEqual([final]);
      const edits = h.edits(ref as MessageRef);
      const interval = h.adapter.editIntervalFor?.(threadKey) ?? h.adapter.capabilities.editIntervalMs;
      expect(edits.length).toBeGreaterThan(1);
      expect(edits.length).toBeLessThanOrEqual(Math.ceil((500 * 40) / interval) + 1);
      for (let i = 1; i < edits.length; i++) {
        expect((edits[i]?.at ?? 0) - (edits[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(interval);
      }
      expect(edits.at(-1)?.text).toBe(final);
    });

    it("rides out a storm of 429s, delayed but losing nothing", async () => {
      await h.groupMessage({ text: "busy day", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const threadKey = (h.received.messages[0] as InboundMessage).threadKey;
      h.rateLimitStorm(6, 2000);
      const text = paragraphs(10, 500);
      const start = h.clock.now();
      await render(h, threadKey, [text.slice(0, 3000), text.slice(3000)]);
      expect(h.rateLimited()).toBe(6);
      expect(h.clock.now() - start).toBeGreaterThanOrEqual(6 * 2000);
      expect(
        h
          .thread(threadKey)
          .filter((m) => m.fromBot)
          .map((m) => m.text)
          .join("\n\n"),
      ).toBe(text);
    });

    it("downloads a file a user posted, with the bot's credentials (platforms with files)", async () => {
      if (!h.adapter.capabilities.files || !h.fileMessage) return;
      const bytes = randomBytes(70_000);
      await h.fileMessage({
        text: "what is in this?",
        name: "blob.bin",
        bytes,
        mimeType: "application/octet-stream",
      });
      await waitFor("the message with its file", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      expect(m.text).toBe("what is in this?");
      expect(m.attachments).toHaveLength(1);
      const download = h.adapter.download?.bind(h.adapter);
      expect(download).toBeDefined();
      const file = await (download as NonNullable<typeof download>)(m.attachments[0] as AttachmentRef);
      expect(Buffer.concat(await readAll(file.body))).toEqual(bytes);
    });

    it("posts a file into the thread that a user can download, once per key where the platform can tell", async () => {
      if (!h.adapter.capabilities.files || !h.botFiles) return;
      await h.groupMessage({ text: "send me the report", mention: true });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      const dir = mkdtempSync(join(tmpdir(), "sb-upload-"));
      try {
        const bytes = Buffer.from("name,total\nalpha,3\n");
        const path = join(dir, "report.csv");
        writeFileSync(path, bytes);
        const file = { path, name: "report.csv", sizeBytes: bytes.length, mimeType: "text/csv" };
        const upload = (h.adapter.uploadFile as NonNullable<ChannelAdapter["uploadFile"]>).bind(h.adapter);
        const key = `u${Date.now().toString(36)}`;
        let staged: string | undefined;
        const opts = {
          caption: "Here is the report.",
          idempotencyKey: key,
          replyTo: m.messageId,
          onStaged: (t: string) => {
            staged = t;
          },
        };
        const ref = await upload(m.threadKey, file, opts);
        const shown = () => (h.botFiles?.(m.threadKey) ?? []).filter((f) => f.name === "report.csv");
        expect(shown()).toEqual([
          { name: "report.csv", bytes, caption: expect.stringContaining("Here is the report.") },
        ]);
        const find = h.adapter.findUploaded?.bind(h.adapter);
        if (find) {
          expect(await find(m.threadKey, key, { replyTo: m.messageId, ...(staged ? { staged } : {}) })).toBe(
            ref,
          );
          return;
        }
        const again = await upload(m.threadKey, file, opts);
        if (h.adapter.capabilities.idempotentPosts) {
          expect(again).toBe(ref);
          expect(shown()).toHaveLength(1);
        } else expect(shown()).toHaveLength(2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("gives a mention inside an existing thread the thread's earlier messages", async () => {
      const first = await h.groupMessage({ text: "shall we ship on Friday?", user: "alice" });
      const second = await h.groupMessage({ text: "only if CI is green", replyTo: first, user: "bob" });
      await h.groupMessage({ text: "is CI green?", mention: true, replyTo: second, user: "carol" });
      await waitFor("the mention", () => h.received.messages.length === 1);
      const m = h.received.messages[0] as InboundMessage;
      expect(h.adapter.fetchHistory).toBeDefined();
      const history = (await h.adapter.fetchHistory?.(m.threadKey, 20, m.messageId)) ?? [];
      expect(history.map((x) => x.text)).toEqual(["shall we ship on Friday?", "only if CI is green"]);
      expect(history.every((x) => !x.fromBot)).toBe(true);
    });
  });
}
