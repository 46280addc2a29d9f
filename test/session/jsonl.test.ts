import { describe, expect, it } from "vitest";
import { createSessionHeader } from "../../src/agent/session/entries.js";
import { checkPiV3, parseSessionJsonl, serializeSession } from "../../src/agent/session/jsonl.js";
import { conversation, warnCollector } from "./fixtures.js";

describe("session JSONL", () => {
  it("writes the header first and one entry per line, in a form pi's v3 reader accepts", () => {
    const header = createSessionHeader("web:abc", { parentSession: "prev-session" });
    const text = serializeSession(header, conversation(2));
    expect(checkPiV3(text)).toEqual([]);
    const first = JSON.parse(text.split("\n")[0] as string);
    expect(first).toEqual({
      type: "session",
      version: 3,
      id: header.id,
      timestamp: header.timestamp,
      cwd: "web:abc",
      threadKey: "web:abc",
      parentSession: "prev-session",
    });
    expect(text.endsWith("\n")).toBe(true);
  });

  it("checkPiV3 names what pi would reject", () => {
    const header = createSessionHeader("web:abc");
    const [a, b] = conversation(1);
    const bad = [
      JSON.stringify({ ...header, version: 2 }),
      JSON.stringify(b),
      JSON.stringify(a),
      JSON.stringify(a),
    ].join("\n");
    expect(checkPiV3(bad)).toEqual([
      "line 1: version 2, expected 3",
      `line 2: parentId ${a?.id} is not an earlier id`,
      `line 4: duplicate id ${a?.id}`,
    ]);
    expect(checkPiV3(JSON.stringify(a))).toEqual(["line 1: not a session header"]);
  });

  it("skips unreadable lines with a warning and keeps the rest", () => {
    const header = createSessionHeader("web:abc");
    const entries = conversation(2);
    const lines = serializeSession(header, entries).trimEnd().split("\n");
    lines.splice(
      2,
      0,
      "{oops",
      '{"type":"message","id":"has space","parentId":null,"timestamp":"x","message":{"role":"user"}}',
    );
    const logger = warnCollector();
    const parsed = parseSessionJsonl(lines.join("\n"), { logger });
    expect(parsed?.entries).toEqual(entries);
    expect(parsed?.skippedLines).toEqual([3, 4]);
    expect(logger.messages).toHaveLength(2);
    expect(parseSessionJsonl("just text\n", { logger })).toBeUndefined();
  });
});
