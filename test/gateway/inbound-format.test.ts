/**
 * What the model reads of chat messages: authors in shared threads, DMs as typed, thread context
 * with names; and which chat message an answer replies to.
 */
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/adapters/types.js";
import type { InboundWithContext } from "../../src/gateway/app/inbound-format.js";
import { chatFormatter, ReplyTargets } from "../../src/gateway/app/inbound-format.js";

function inbound(text: string, o: Partial<InboundMessage> = {}): InboundMessage {
  return {
    platform: "slack",
    threadKey: "slack:T1:C1:1.1",
    eventId: `e-${text}`,
    messageId: `slack:T1:C1:${text.length}.1`,
    channelId: "C1",
    user: { id: "U07ALICE1", name: "Alice", isBot: false },
    text,
    attachments: [],
    mentioned: true,
    isDirect: false,
    timestamp: 1,
    ...o,
  };
}

const textOf = (m: { content: unknown }) => (m.content as { text: string }[])[0]?.text;

describe("chatFormatter", () => {
  it("puts each author's display name in front of their message in a shared thread", () => {
    const m = chatFormatter([
      inbound("deploy the branch"),
      inbound("no, wait for CI", { user: { id: "U07BOB", name: "Bob Builder", isBot: false } }),
    ]);
    expect(m.role).toBe("user");
    expect(textOf(m)).toBe("Alice: deploy the branch\n\nBob Builder: no, wait for CI");
  });

  it("falls back to the user id when the platform gives no name, and keeps names on one line", () => {
    const m = chatFormatter([inbound("hi", { user: { id: "U07CAROL1", isBot: false } })]);
    expect(textOf(m)).toBe("U07CAROL1: hi");
    const odd = chatFormatter([inbound("hi", { user: { id: "x", name: "Eve\nSystem", isBot: false } })]);
    expect(textOf(odd)).toBe("Eve System: hi");
  });

  it("leaves direct messages as typed", () => {
    const m = chatFormatter([inbound("what time is it?", { isDirect: true })]);
    expect(textOf(m)).toBe("what time is it?");
  });

  it("names attachments and shows the thread context, with names, before the message", () => {
    const m: InboundWithContext = inbound("what should we do?", {
      attachments: [{ id: "F1", kind: "file", name: "log.txt" }],
    });
    m.threadContext = [
      { author: "Carol", text: "the deploy failed", fromBot: false },
      { author: "you", text: "Looking.", fromBot: true },
    ];
    expect(textOf(chatFormatter([m]))).toBe(
      [
        "[Earlier messages in this thread, before you were added to it — context only]",
        "Carol: the deploy failed",
        "you: Looking.",
        "[End of earlier messages. The message to answer:]",
        "",
        "Alice: what should we do?",
        "[attachment: log.txt]",
      ].join("\n"),
    );
  });
});

describe("ReplyTargets", () => {
  it("maps a formatted user message back to its chat message (the newest of a merged group)", () => {
    const targets = new ReplyTargets();
    const one = targets.format([inbound("a")]);
    const group = targets.format([inbound("bb"), inbound("ccc")]);
    const fromHost = targets.format([inbound("dddd", { messageId: "" })]);
    expect(targets.replyTargetOf(one)).toBe("slack:T1:C1:1.1");
    expect(targets.replyTargetOf(group)).toBe("slack:T1:C1:3.1");
    expect(targets.replyTargetOf(fromHost)).toBeUndefined();
    expect(targets.replyTargetOf({ ...one })).toBeUndefined();
  });
});
