/**
 * The Slack side of the adapter contract: Bolt and web-api against the fake Slack, either over
 * Socket Mode or over signed HTTP Events API requests to `handleHttp` mounted in a plain Node server
 * (as the gateway mounts it).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SlackAdapter, type SlackAdapterConfig } from "../../../src/adapters/slack/index.js";
import type { MessageRef } from "../../../src/adapters/types.js";
import { BOT_USER_ID, FakeSlack, TEAM_ID } from "../../fakes/slack/server.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type ContractHarness, Received, type UserMessage, type VisibleMessage } from "../contract.js";

export const CHANNEL = "C0GENERAL";
export const DM = "D0ALICE";
export const USERS: Record<string, string> = { alice: "U0ALICE", bob: "U0BOB", carol: "U0CAROL" };

/** Reaction names as Slack sends them, for the emoji the contract uses. */
const SLACK_NAMES: Record<string, string> = {
  "✅": "white_check_mark",
  "❌": "x",
  "👀": "eyes",
  "♾️": "infinity",
};

export interface SlackHarness extends ContractHarness {
  readonly fake: FakeSlack;
  readonly adapter: SlackAdapter;
  /** The Node server `handleHttp` is mounted in (HTTP mode). */
  readonly eventsUrl: string | undefined;
  /** The Slack message ts behind a harness handle. */
  tsOf(m: UserMessage): string;
}

export interface SlackHarnessOptions {
  mode: "socket" | "http";
  adapter?: Partial<SlackAdapterConfig>;
  /** Start the adapter (default true). */
  start?: boolean;
}

export async function createSlackHarness(opts: SlackHarnessOptions): Promise<SlackHarness> {
  const clock = new ManualClock();
  const fake = await new FakeSlack({ now: () => clock.now() }).start();
  fake.channel(CHANNEL, "channel", "general");
  fake.channel(DM, "im", "alice");
  for (const [name, id] of Object.entries(USERS)) fake.user(id, name);

  const adapter = new SlackAdapter({
    botToken: fake.botToken,
    apiUrl: fake.apiUrl,
    inbound:
      opts.mode === "socket"
        ? { mode: "socket", appToken: fake.appToken }
        : { mode: "http", signingSecret: fake.signingSecret },
    ...opts.adapter,
  });

  let server: Server | undefined;
  let eventsUrl: string | undefined;
  if (opts.mode === "http") {
    server = createServer((req, res) => {
      if (!adapter.handleHttp(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    fake.eventsUrl = eventsUrl;
  }

  const received = new Received();
  if (opts.start !== false) await adapter.start(received);

  const handles = new Map<string, { channel: string; ts: string; threadTs?: string }>();
  let lastEventId: string | undefined;
  const track = (channel: string, ts: string, threadTs: string | undefined): UserMessage => {
    handles.set(ts, { channel, ts, ...(threadTs ? { threadTs } : {}) });
    return { id: ts };
  };

  const harness: SlackHarness = {
    platform: "slack",
    adapter,
    received,
    clock,
    fake,
    eventsUrl,
    tsOf: (m) => m.id,
    async groupMessage(o) {
      const parent = o.replyTo ? handles.get(o.replyTo.id) : undefined;
      const threadTs = parent ? (parent.threadTs ?? parent.ts) : undefined;
      const { message, deliveries } = await fake.userMessage({
        channel: CHANNEL,
        user: USERS[o.user ?? "alice"] ?? "U0ALICE",
        text: o.text,
        ...(o.mention ? { mention: true } : {}),
        ...(threadTs ? { threadTs } : {}),
      });
      lastEventId = deliveries.at(-1)?.eventId;
      return track(CHANNEL, message.ts, threadTs);
    },
    async fileMessage(o) {
      const file = fake.files.userFile({
        name: o.name,
        bytes: o.bytes,
        mimetype: o.mimeType,
        user: USERS.alice ?? "",
      });
      const { message, deliveries } = await fake.userMessage({
        channel: CHANNEL,
        user: USERS.alice ?? "U0ALICE",
        text: o.text,
        mention: true,
        files: [file],
      });
      lastEventId = deliveries.at(-1)?.eventId;
      return track(CHANNEL, message.ts, undefined);
    },
    botFiles(threadKey: string) {
      const [, , channel, threadTs] = threadKey.split(":");
      const messages = fake.world.thread(channel ?? "", threadTs ?? "");
      return fake.files.botFiles(channel ?? "").flatMap((f) => {
        const share = f.shares.get(channel ?? "")?.[0];
        const msg = messages.find((x) => x.ts === share?.ts);
        return msg ? [{ name: f.name, bytes: f.bytes, caption: msg.text }] : [];
      });
    },
    async directMessage(text) {
      const { message, deliveries } = await fake.userMessage({ channel: DM, user: USERS.alice ?? "", text });
      lastEventId = deliveries.at(-1)?.eventId;
      return track(DM, message.ts, undefined);
    },
    async react(ref: MessageRef, emoji: string) {
      const [, , channel, ts] = ref.split(":");
      const d = await fake.reaction({
        channel: channel ?? "",
        ts: ts ?? "",
        user: USERS.bob ?? "",
        name: SLACK_NAMES[emoji] ?? emoji.replace(/:/g, ""),
      });
      lastEventId = d.eventId;
    },
    async command(name, args) {
      await fake.slashCommand({ channel: CHANNEL, user: USERS.alice ?? "", command: name, text: args });
    },
    async redeliverLast() {
      if (!lastEventId) throw new Error("nothing delivered yet");
      await fake.redeliver(lastEventId, 1);
    },
    thread(threadKey: string): VisibleMessage[] {
      const [, team, channel, threadTs] = threadKey.split(":");
      if (team !== TEAM_ID || !channel || !threadTs) throw new Error(`unexpected thread key ${threadKey}`);
      const msgs = threadTs === "0" ? fake.world.topLevel(channel) : fake.world.thread(channel, threadTs);
      return msgs.map((m) => ({ text: m.text, fromBot: m.user === BOT_USER_ID }));
    },
    edits(ref: MessageRef) {
      const [, , channel, ts] = ref.split(":");
      return fake.api.calls
        .filter(
          (c) =>
            c.method === "chat.update" &&
            c.status === 200 &&
            !c.error &&
            c.params.channel === channel &&
            c.params.ts === ts,
        )
        .map((c) => ({ at: c.at, text: String(c.params.text) }));
    },
    rateLimitStorm(count, retryAfterMs) {
      fake.api.rateLimitStorm(count, Math.ceil(retryAfterMs / 1000));
    },
    rateLimited() {
      return fake.api.calls.filter((c) => c.status === 429).length;
    },
    async close() {
      await adapter.stop();
      await fake.close();
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((r) => server?.close(() => r()));
      }
    },
  };
  return harness;
}
