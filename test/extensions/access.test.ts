import { describe, expect, it } from "vitest";
import { AccessGate } from "../../src/extensions/access/gate.js";
import { MemoryNoticeMemory } from "../../src/extensions/access/notices.js";
import { type AccessConfig, type AccessSubject, checkAccess } from "../../src/extensions/access/policy.js";
import { ManualClock } from "../support/manual-clock.js";

const config: AccessConfig = {
  slack: {
    allowedUsers: ["U_ALICE"],
    allowedChannels: ["C_OPS"],
    admins: ["U_ADMIN"],
  },
  telegram: { dmPolicy: "open", requireMention: false },
  discord: { dmPolicy: "disabled", allowedUsers: ["D_ALICE"] },
  web: {},
};

type Row = [string, Partial<AccessSubject> & { platform: string }, string];

const base = { channelId: "C_OPS", user: { id: "U_ALICE", isBot: false }, isDirect: false, mentioned: true };

const rows: Row[] = [
  ["allowed user, allowed channel, mentioned", { platform: "slack" }, "allow"],
  ["the bot's own message", { platform: "slack", user: { id: "U_BOT", isBot: false } }, "own_message"],
  ["another bot", { platform: "slack", user: { id: "B_OTHER", isBot: true } }, "bot"],
  [
    "an admin that is a bot is still a bot",
    { platform: "slack", user: { id: "U_ADMIN", isBot: true } },
    "bot",
  ],
  [
    "not mentioned in a group (requireMention default on)",
    { platform: "slack", mentioned: false },
    "not_mentioned",
  ],
  [
    "mention not given: native commands count as addressed",
    { platform: "slack", mentioned: undefined },
    "allow",
  ],
  ["a channel not on the list", { platform: "slack", channelId: "C_RANDOM" }, "channel_not_allowed"],
  [
    "a user not on the list",
    { platform: "slack", user: { id: "U_MALLORY", isBot: false } },
    "user_not_allowed",
  ],
  ["an admin not on the user list", { platform: "slack", user: { id: "U_ADMIN", isBot: false } }, "allow"],
  [
    "an admin in a channel not on the list",
    { platform: "slack", user: { id: "U_ADMIN", isBot: false }, channelId: "C_X" },
    "channel_not_allowed",
  ],
  ["DM from an allowed user (allowlist default)", { platform: "slack", isDirect: true }, "allow"],
  ["DM from an admin", { platform: "slack", isDirect: true, user: { id: "U_ADMIN", isBot: false } }, "allow"],
  [
    "DM from someone else",
    { platform: "slack", isDirect: true, user: { id: "U_MALLORY", isBot: false } },
    "dm_not_allowed",
  ],
  ["DM, open policy", { platform: "telegram", isDirect: true, user: { id: "T_ANY", isBot: false } }, "allow"],
  [
    "group without mention where requireMention is off",
    { platform: "telegram", mentioned: false, channelId: "-100" },
    "allow",
  ],
  [
    "DM, disabled policy, even for an allowed user",
    { platform: "discord", isDirect: true, user: { id: "D_ALICE", isBot: false } },
    "dm_disabled",
  ],
  [
    "no lists: anyone in any channel when mentioned",
    { platform: "web", channelId: "any", user: { id: "W1", isBot: false } },
    "allow",
  ],
  [
    "no lists: DMs only for admins (there are none)",
    { platform: "web", isDirect: true, user: { id: "W1", isBot: false } },
    "dm_not_allowed",
  ],
  [
    "a platform without config gets the defaults",
    { platform: "matrix", user: { id: "M1", isBot: false } },
    "allow",
  ],
];

describe("checkAccess", () => {
  it.each(rows)("%s", (_name, overrides, expected) => {
    const subject = { ...base, ...overrides } as AccessSubject;
    const decision = checkAccess(config, subject, "U_BOT");
    expect(decision.allow ? "allow" : decision.reason).toBe(expected);
  });

  it("only denials of people (not bots, not unaddressed messages) get a notice", () => {
    const notify = (o: Partial<AccessSubject>) => {
      const d = checkAccess(config, { ...base, platform: "slack", ...o } as AccessSubject, "U_BOT");
      return d.allow ? undefined : d.notify;
    };
    expect(notify({ user: { id: "U_MALLORY", isBot: false } })).toBe(true);
    expect(notify({ channelId: "C_RANDOM" })).toBe(true);
    expect(notify({ user: { id: "B", isBot: true } })).toBe(false);
    expect(notify({ mentioned: false })).toBe(false);
  });
});

describe("AccessGate", () => {
  const mallory = { ...base, platform: "slack", user: { id: "U_MALLORY", isBot: false } };

  it("someone not allowed gets no run and at most one notice per thread within the TTL", async () => {
    const clock = new ManualClock();
    const gate = new AccessGate({ config, notices: new MemoryNoticeMemory(clock), noticeTtlMs: 60_000 });
    const first = await gate.check({ ...mallory, threadKey: "slack:T:C_OPS:1" });
    expect(first).toEqual({
      run: false,
      reason: "user_not_allowed",
      notice: "Sorry, you are not on the list of people who can use this bot. Ask an admin to add you.",
    });
    expect(await gate.check({ ...mallory, threadKey: "slack:T:C_OPS:1" })).toEqual({
      run: false,
      reason: "user_not_allowed",
    });
    expect((await gate.check({ ...mallory, threadKey: "slack:T:C_OPS:2" })).run).toBe(false);
    expect(await gate.check({ ...mallory, threadKey: "slack:T:C_OPS:2" })).not.toHaveProperty("notice");
    await clock.advance(60_001);
    expect(await gate.check({ ...mallory, threadKey: "slack:T:C_OPS:1" })).toHaveProperty("notice");
    expect(await gate.check({ ...base, platform: "slack", threadKey: "slack:T:C_OPS:1" })).toEqual({
      run: true,
    });
  });

  it("silent denials never claim the notice", async () => {
    const gate = new AccessGate({ config, notices: new MemoryNoticeMemory() });
    expect(await gate.check({ ...base, platform: "slack", mentioned: false, threadKey: "t" })).toEqual({
      run: false,
      reason: "not_mentioned",
    });
    expect(await gate.check({ ...mallory, threadKey: "t" })).toHaveProperty("notice");
  });

  it("a failing notice memory skips the notice but still denies", async () => {
    const gate = new AccessGate({
      config,
      notices: {
        claim: async () => {
          throw new Error("redis down");
        },
      },
    });
    expect(await gate.check({ ...mallory, threadKey: "t" })).toEqual({
      run: false,
      reason: "user_not_allowed",
    });
  });

  it("settings: admins only in channels and groups by default, everyone in DMs; the channel's policy overrides", () => {
    const gate = new AccessGate({ config, notices: new MemoryNoticeMemory() });
    expect(gate.mayChangeSettings("slack", "U_ADMIN", false)).toBe(true);
    expect(gate.mayChangeSettings("slack", "U_ALICE", false)).toBe(false);
    expect(gate.mayChangeSettings("slack", "U_ALICE", true)).toBe(true);
    const open = new AccessGate({
      config: { slack: { ...config.slack, settings: "everyone" } },
      notices: new MemoryNoticeMemory(),
    });
    expect(open.mayChangeSettings("slack", "U_ALICE", false)).toBe(true);
    const strict = new AccessGate({
      config: { slack: { ...config.slack, settings: "admins" } },
      notices: new MemoryNoticeMemory(),
    });
    expect(strict.mayChangeSettings("slack", "U_ALICE", true)).toBe(false);
    expect(strict.mayChangeSettings("slack", "U_ADMIN", true)).toBe(true);
  });

  it("knows which platforms have an admin at all", () => {
    const gate = new AccessGate({ config, notices: new MemoryNoticeMemory() });
    expect(gate.hasAdmins("slack")).toBe(true);
    expect(gate.hasAdmins("telegram")).toBe(false);
  });

  it("answers isAdmin per platform", () => {
    const gate = new AccessGate({ config, notices: new MemoryNoticeMemory() });
    expect(gate.isAdmin("slack", "U_ADMIN")).toBe(true);
    expect(gate.isAdmin("discord", "U_ADMIN")).toBe(false);
    expect(gate.isAdmin("slack", "U_ALICE")).toBe(false);
  });
});
