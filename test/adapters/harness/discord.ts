/**
 * The Discord side of the adapter contract: discord.js (gateway + REST) against the fake Discord.
 * A reply in a group channel happens the way Discord users continue a conversation: inside the
 * thread on that message (started by the user when there is none yet).
 */

import { DiscordAdapter, type DiscordAdapterConfig } from "../../../src/adapters/discord/index.js";
import type { MessageRef } from "../../../src/adapters/types.js";
import { BOT_USER_ID, type DUser, FakeDiscord, GENERAL_ID, GUILD_ID } from "../../fakes/discord/server.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type ContractHarness, Received, type UserMessage, type VisibleMessage } from "../contract.js";

export interface DiscordHarness extends ContractHarness {
  readonly fake: FakeDiscord;
  readonly adapter: DiscordAdapter;
  readonly users: Record<"alice" | "bob" | "carol", DUser>;
  /** Channel and message id behind a harness handle. */
  locate(m: UserMessage): { channelId: string; messageId: string };
}

export interface DiscordHarnessOptions {
  adapter?: Partial<DiscordAdapterConfig>;
  /** Start the adapter (default true). */
  start?: boolean;
  fake?: FakeDiscord;
  clock?: ManualClock;
}

/** Messages of a conversation as a user sees them, oldest first (ephemeral ones left out). */
export function conversation(fake: FakeDiscord, threadKey: string): VisibleMessage[] {
  const [, guild, channel = "", anchor = "0"] = threadKey.split(":");
  const visible = (channelId: string) =>
    fake.world
      .all(channelId)
      .filter((m) => !m.ephemeral)
      .map((m) => ({
        id: m.id,
        ref: m.reference?.messageId,
        text: m.content,
        fromBot: m.author.id === BOT_USER_ID,
      }));
  if (guild === "dm" || anchor === "0")
    return visible(channel).map(({ text, fromBot }) => ({ text, fromBot }));
  if (fake.world.channels.has(anchor)) {
    const root = visible(channel).filter((m) => m.id === anchor);
    return [...root, ...visible(anchor)].map(({ text, fromBot }) => ({ text, fromBot }));
  }
  // Reply chain: every message whose references lead to the anchor.
  const all = visible(channel);
  const byId = new Map(all.map((m) => [m.id, m]));
  const rootOf = (id: string): string => {
    let cur = byId.get(id);
    for (let i = 0; cur?.ref && i < 100; i++) cur = byId.get(cur.ref) ?? undefined;
    return cur?.id ?? id;
  };
  return all.filter((m) => rootOf(m.id) === anchor).map(({ text, fromBot }) => ({ text, fromBot }));
}

export async function createDiscordHarness(opts: DiscordHarnessOptions = {}): Promise<DiscordHarness> {
  const clock = opts.clock ?? new ManualClock();
  const fake = opts.fake ?? (await new FakeDiscord({ now: () => clock.now() }).start());
  const users = { alice: fake.user("alice"), bob: fake.user("bob"), carol: fake.user("carol") };
  const adapter = new DiscordAdapter({
    token: fake.token,
    apiUrl: fake.apiUrl,
    guildId: GUILD_ID,
    clock,
    ...opts.adapter,
  });
  const received = new Received();
  if (opts.start !== false) await adapter.start(received);

  const handles = new Map<string, { channelId: string; messageId: string }>();
  const track = (channelId: string, messageId: string): UserMessage => {
    const id = `${channelId}:${messageId}`;
    handles.set(id, { channelId, messageId });
    return { id };
  };
  const locate = (m: UserMessage) => {
    const h = handles.get(m.id);
    if (!h) throw new Error(`unknown handle ${m.id}`);
    return h;
  };

  const harness: DiscordHarness = {
    platform: "discord",
    adapter,
    received,
    clock,
    fake,
    users,
    locate,
    async groupMessage(o) {
      const author = users[(o.user ?? "alice") as keyof typeof users] ?? users.alice;
      let channelId = GENERAL_ID;
      if (o.replyTo) {
        const parent = locate(o.replyTo);
        const parentChannel = fake.world.channels.get(parent.channelId);
        if (parentChannel?.type === 11) channelId = parentChannel.id;
        else {
          const msg = fake.world.find(parent.channelId, parent.messageId);
          channelId =
            msg?.threadId ??
            fake.userThread({
              channelId: parent.channelId,
              owner: author,
              name: "discussion",
              messageId: parent.messageId,
            }).id;
        }
      }
      const m = fake.userMessage({
        channelId,
        author,
        content: o.text,
        ...(o.mention ? { mention: true } : {}),
      });
      return track(channelId, m.id);
    },
    async fileMessage(o) {
      const m = fake.userMessage({
        channelId: GENERAL_ID,
        author: users.alice,
        content: o.text,
        mention: true,
        files: [{ filename: o.name, bytes: o.bytes, contentType: o.mimeType }],
      });
      return track(GENERAL_ID, m.id);
    },
    botFiles(threadKey: string) {
      const [, , channel = "", anchor = "0"] = threadKey.split(":");
      const channels = fake.world.channels.has(anchor) ? [anchor] : [channel];
      return channels.flatMap((c) =>
        fake.botFiles(c).map(({ name, bytes, caption }) => ({ name, bytes, caption })),
      );
    },
    async directMessage(text) {
      const dm = fake.dm(users.alice);
      const m = fake.userMessage({ channelId: dm.id, author: users.alice, content: text });
      return track(dm.id, m.id);
    },
    async react(ref: MessageRef, emoji: string) {
      const [, channelId = "", messageId = ""] = ref.split(":");
      fake.reaction({ channelId, messageId, user: users.bob, emoji });
    },
    async command(name, args) {
      fake.interaction({ channelId: GENERAL_ID, user: users.alice, name, args });
    },
    async redeliverLast() {
      fake.redeliverLast();
    },
    thread: (threadKey) => conversation(fake, threadKey),
    edits(ref: MessageRef) {
      const [, channelId, messageId] = ref.split(":");
      return fake.rest.calls
        .filter(
          (c) =>
            c.method === "PATCH" &&
            c.status === 200 &&
            c.path === `/channels/${channelId}/messages/${messageId}`,
        )
        .map((c) => ({ at: c.at, text: String(c.body?.content) }));
    },
    rateLimitStorm(count, retryAfterMs) {
      fake.rest.rateLimitStorm(count, retryAfterMs);
    },
    rateLimited() {
      return fake.rest.calls.filter((c) => c.status === 429).length;
    },
    async close() {
      await adapter.stop();
      if (!opts.fake) await fake.close();
    },
  };
  return harness;
}
