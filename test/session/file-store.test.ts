import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { createSessionHeader } from "../../src/agent/session/entries.js";
import { checkPiV3, serializeSession } from "../../src/agent/session/jsonl.js";
import { LeaseLostError } from "../../src/queue/store/errors.js";
import { FileSessionStore } from "../../src/queue/store/file-store.js";
import { decodeThreadKey, encodeThreadKey } from "../../src/queue/store/thread-dir.js";
import type { Fence } from "../../src/queue/store/types.js";
import { conversation, texts, warnCollector } from "./fixtures.js";
import { describeSessionStoreContract } from "./store-contract.js";

/** A clock that moves 1 ms forward on every reading. */
function tickingClock(): () => number {
  let t = 1_700_000_000_000;
  return () => ++t;
}

describeSessionStoreContract("files", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-sessions-"));
  const leases = new Map<string, string>();
  const fenceCheck = (threadKey: string, fence: Fence) => leases.get(threadKey) === fence.token;
  const logger = warnCollector();
  const now = tickingClock();
  const store = new FileSessionStore({ dataDir, logger, fenceCheck, now });
  return {
    store,
    warnings: logger.messages,
    holdLease: async (threadKey, token) => {
      leases.set(threadKey, token);
      return { key: `lease:${threadKey}`, token };
    },
    injectGarbage: async (threadKey, sessionId, line) => {
      await appendFile(
        join(dataDir, "sessions", encodeThreadKey(threadKey), `${sessionId}.jsonl`),
        `${line}\n`,
      );
    },
    reopen: async () => new FileSessionStore({ dataDir, logger, fenceCheck, now }),
    dispose: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe("FileSessionStore", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "sb-sessions-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("writes sessions to ./data/sessions/<thread>/<session>.jsonl as pi v3 files", async () => {
    const store = new FileSessionStore({ dataDir });
    const thread = "discord:G1:C2:M3";
    const header = await store.createSession(thread);
    await store.append(thread, header.id, conversation(2));
    const dir = join(dataDir, "sessions", encodeThreadKey(thread));
    expect((await readdir(dir)).sort()).toEqual([`${header.id}.jsonl`, "meta.json"]);
    const text = await readFile(join(dir, `${header.id}.jsonl`), "utf8");
    expect(checkPiV3(text)).toEqual([]);
    expect(text.trimEnd().split("\n")).toHaveLength(5);
  });

  it("loads a file with a garbage middle line and a truncated last line, and appends after it", async () => {
    const thread = "web:damaged";
    const header = createSessionHeader(thread);
    const entries = conversation(3);
    const lines = serializeSession(header, entries).trimEnd().split("\n");
    // Line 4 ("question 1") is garbage; the last entry ("answer 2") was cut off mid-write.
    lines[3] = "\u0000\u0000garbage{{{";
    const last = lines.pop() as string;
    const text = `${lines.join("\n")}\n${last.slice(0, 25)}`;
    const dir = join(dataDir, "sessions", encodeThreadKey(thread));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${header.id}.jsonl`), text);

    const logger = warnCollector();
    const store = new FileSessionStore({ dataDir, logger });
    const branch = await store.readBranch(thread);
    expect(texts(buildSessionContext(branch?.entries ?? []).messages)).toEqual([
      "user:question 0 x",
      "assistant:answer 0 x",
      "assistant:answer 1 x",
      "user:question 2 x",
    ]);
    expect(logger.messages).toEqual(
      expect.arrayContaining([
        "Skipping an unreadable line of a session",
        "Skipping a truncated last line of a session",
        "A session entry's parent is missing; attaching it to the entry before it",
      ]),
    );

    const next = conversation(1, branch?.leafId ?? null, "resumed");
    await store.append(thread, header.id, next);
    const reopened = new FileSessionStore({ dataDir, logger: warnCollector() });
    const after = await reopened.readBranch(thread);
    expect(texts(buildSessionContext(after?.entries ?? []).messages).slice(-2)).toEqual([
      "user:question 0 resumed",
      "assistant:answer 0 resumed",
    ]);
    const raw = await readFile(join(dir, `${header.id}.jsonl`), "utf8");
    expect(raw.endsWith("\n")).toBe(true);
    // The truncated line stays on its own line; the new entries are whole lines after it.
    expect(
      raw
        .trimEnd()
        .split("\n")
        .slice(-2)
        .map((l) => JSON.parse(l).id),
    ).toEqual(next.map((e) => e.id));
  });

  it("continues from the last readable entry when the line of a moved leaf is damaged", async () => {
    const store = new FileSessionStore({ dataDir });
    const thread = "web:lost-leaf";
    const header = await store.createSession(thread);
    const entries = conversation(2);
    await store.append(thread, header.id, entries);
    await store.setLeaf(thread, header.id, entries[1]?.id ?? null);
    const path = join(dataDir, "sessions", encodeThreadKey(thread), `${header.id}.jsonl`);
    const lines = (await readFile(path, "utf8")).split("\n");
    lines[2] = "garbage";
    await writeFile(path, lines.join("\n"));
    const logger = warnCollector();
    const reopened = new FileSessionStore({ dataDir, logger });
    const branch = await reopened.readBranch(thread);
    expect(branch?.leafId).toBe(entries[3]?.id);
    expect(texts(buildSessionContext(branch?.entries ?? []).messages)).toEqual([
      "user:question 0 x",
      "user:question 1 x",
      "assistant:answer 1 x",
    ]);
    expect(logger.messages).toContain("Stored leaf entry is unreadable; using the last entry");
  });

  it("rebuilds a damaged meta.json from the session files", async () => {
    const store = new FileSessionStore({ dataDir });
    const thread = "web:meta";
    const a = await store.createSession(thread);
    await store.append(thread, a.id, conversation(1));
    const b = await store.createSession(thread);
    await writeFile(join(dataDir, "sessions", encodeThreadKey(thread), "meta.json"), "{not json");
    const logger = warnCollector();
    const reopened = new FileSessionStore({ dataDir, logger });
    expect((await reopened.listSessions(thread)).map((s) => s.header.id).sort()).toEqual([a.id, b.id].sort());
    expect((await reopened.getThreadMeta(thread))?.currentSessionId).toBeDefined();
    expect(logger.messages[0]).toMatch(/meta file is unreadable/);
  });

  it("refuses a fenced append when the lease table says another worker holds the thread", async () => {
    let holder = "a";
    const store = new FileSessionStore({ dataDir, fenceCheck: (_t, f) => f.token === holder });
    const header = await store.createSession("web:fence");
    holder = "b";
    await expect(
      store.append("web:fence", header.id, conversation(1), { fence: { key: "k", token: "a" } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.readAll("web:fence", header.id)).entries).toEqual([]);
  });
});

describe("thread keys as directory names", () => {
  it("round-trips, stays case-distinct and never makes a hidden or relative name", () => {
    const keys = [
      "slack:T1:C2:1712.33",
      "slack:t1:c2:1712.33",
      "web:../../etc",
      ".hidden",
      "telegram:-100:0:5",
      "web:日本",
    ];
    const names = keys.map(encodeThreadKey);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(keys.length);
    for (const [i, name] of names.entries()) {
      expect(name).toMatch(/^[a-z0-9_%+-][a-z0-9_.%+-]*$/);
      expect(decodeThreadKey(name)).toBe(keys[i]);
    }
    expect(encodeThreadKey("slack:T1:C2:1712.33")).toBe("slack%3a+t1%3a+c2%3a1712.33");
    expect(decodeThreadKey("meta.json")).toBe("meta.json");
    expect(decodeThreadKey("Bad")).toBeUndefined();
  });
});
