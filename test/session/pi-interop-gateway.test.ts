/**
 * pi interop through the running gateway (Telegram fake, fake LLM server), in Redis mode and in
 * embedded mode with files: a pi session imported into a thread continues with pi's model,
 * thinking level and context (its `bashExecution` messages as pi sends them); settings changed in
 * chat (`/model` with its clamp, `/thinking`) are written once each, and the session the worker
 * wrote reads the same in pi's `SessionManager` at every leaf.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_THINKING_BUDGETS } from "../../src/agent/llm/thinking.js";
import type { SessionEntry } from "../../src/agent/session/types.js";
import type { Gateway } from "../../src/gateway/app/index.js";
import { conversation, waitForBot } from "../e2e/support/drivers.js";
import { lastUserText, until, World } from "../e2e/support/world.js";
import { assistant, toolResult, user } from "./fixtures.js";
import { expectSameAtEveryLeaf } from "./pi-interop.js";

/** The thread whose stored session mentions `text`. */
async function threadWith(app: Gateway, text: string): Promise<string> {
  return until(async () => {
    for (const t of await app.store.listThreads({ limit: 100 })) {
      const branch = await app.store.readBranch(t.threadKey);
      if (JSON.stringify(branch?.entries ?? []).includes(text)) return t.threadKey;
    }
    return undefined;
  }, `the thread that holds "${text}"`);
}

/** A pi session on the world's `beta/two` (reasoning) model: thinking `medium` set before pi's compaction. */
function piSessionText(dir: string): string {
  const sm = SessionManager.create("/home/ada/project", dir);
  sm.appendModelChange("beta", "two");
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage(user("the old part"));
  sm.appendMessage(assistant("old answer", { provider: "beta", model: "two" }));
  const kept = sm.appendMessage(user("pi question kept"));
  sm.appendMessage(
    assistant("pi answer kept", { provider: "beta", model: "two", toolCalls: [{ id: "r1", name: "read" }] }),
  );
  sm.appendMessage(toolResult("r1", "read result", "read"));
  sm.appendCompaction("pi's summary of the old part", kept, 9000, { readFiles: [], modifiedFiles: [] });
  const bash = { role: "bashExecution", cancelled: false, truncated: false, timestamp: 1_700_000_000_000 };
  sm.appendMessage({ ...bash, command: "git status", output: "clean", exitCode: 0 } as never);
  sm.appendMessage({
    ...bash,
    command: "cat secret.txt",
    output: "s3cret",
    exitCode: 0,
    excludeFromContext: true,
  } as never);
  sm.appendMessage(assistant("pi's last answer", { provider: "beta", model: "two" }));
  const file = sm.getSessionFile();
  if (!file) throw new Error("pi did not persist the session");
  return readFileSync(file, "utf8");
}

describe.each([true, false])("pi interop through the gateway (redis: %s)", (redis) => {
  let world: World;
  let app: Gateway;
  let dir: string;

  beforeAll(async () => {
    world = await World.create({ redis });
    app = await world.start("all", { channels: ["telegram"] });
    dir = mkdtempSync(join(tmpdir(), "sb-pi-gw-"));
  });
  afterAll(async () => {
    await world?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a pi session imported into a thread goes on with pi's model, thinking level and context", async () => {
    const c = conversation(world, "telegram");
    await c.start(`hello ${redis}`);
    await waitForBot(c, (m) => m.text === `alpha answers: hello ${redis}`, "the first answer");
    const threadKey = await threadWith(app, `hello ${redis}`);
    const text = piSessionText(dir);
    const { sessionId } = await app.store.importJsonl(text, threadKey);
    expect(await app.store.exportJsonl(threadKey, sessionId)).toBe(text);

    const before = world.requests("anthropic-messages").length;
    await c.say(`go on ${redis}`);
    await waitForBot(c, (m) => m.text === `beta answers: go on ${redis}`, "beta's answer");
    const request = world
      .requests("anthropic-messages")
      .slice(before)
      .find((r) => lastUserText(r).includes(`go on ${redis}`));
    expect(request?.body.model).toBe("two");
    // pi said medium before its compaction; the thread thinks at medium (more than low's budget;
    // medium's own is capped by the model's output limit here).
    expect(request?.body.thinking).toMatchObject({ type: "enabled" });
    const budget = (request?.body.thinking as { budget_tokens?: number } | undefined)?.budget_tokens ?? 0;
    expect(budget).toBeGreaterThan(DEFAULT_THINKING_BUDGETS.low);
    expect((await app.store.getThreadMeta(threadKey))?.thinkingLevel).toBe("medium");
    const sent = JSON.stringify(request?.body.messages);
    expect(sent).toContain(
      "The conversation history before this point was compacted into the following summary:\\n\\n<summary>\\npi's summary of the old part\\n</summary>",
    );
    expect(sent).toContain("Ran `git status`\\n```\\nclean\\n```");
    expect(sent).not.toContain("secret");
    expect(sent).not.toContain("old answer");

    // What the worker appended keeps pi's lines and reads the same in pi.
    const after = await app.store.exportJsonl(threadKey, sessionId);
    expect(after.startsWith(text)).toBe(true);
    await expectSameAtEveryLeaf(after, dir, app.store, threadKey, sessionId);
  });

  it("/model (with its clamp) and /thinking write one entry each; pi reads the session the same", async () => {
    const c = conversation(world, "telegram");
    const tag = `settings-${redis}`;
    await c.start(`first ${tag}`);
    await waitForBot(c, (m) => m.text === `alpha answers: first ${tag}`, "alpha's answer");
    await c.command("model", "beta/two");
    await waitForBot(c, (m) => m.text.includes("Model set to beta/two"), "the /model reply");
    await c.command("thinking", "medium");
    await waitForBot(c, (m) => m.text.startsWith("Thinking level set to medium"), "the /thinking reply");
    await c.say(`second ${tag}`);
    await waitForBot(c, (m) => m.text === `beta answers: second ${tag}`, "beta's answer");
    await c.command("model", "alpha/one");
    await waitForBot(
      c,
      (m) => m.text.includes("Thinking level medium is not supported by Alpha One; it is now off."),
      "the clamp",
    );
    await c.say(`third ${tag}`);
    await waitForBot(c, (m) => m.text === `alpha answers: third ${tag}`, "alpha's second answer");

    const threadKey = await threadWith(app, `first ${tag}`);
    const meta = await app.store.getThreadMeta(threadKey);
    const sessionId = meta?.currentSessionId as string;
    const text = await app.store.exportJsonl(threadKey, sessionId);
    const entries = text
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l) as SessionEntry);
    const settings = entries.flatMap((e) =>
      e.type === "thinking_level_change"
        ? [`thinking ${e.thinkingLevel}`]
        : e.type === "model_change"
          ? [`model ${e.provider}/${e.modelId}`]
          : [],
    );
    expect(settings).toEqual([
      "model alpha/one",
      "model beta/two",
      "thinking medium",
      "model alpha/one",
      "thinking off",
    ]);
    // One line of history: no entry shares its parent with another (no stray side branch).
    const parents = entries.map((e) => e.parentId);
    expect(new Set(parents).size).toBe(parents.length);
    for (const e of entries) expect(e.id).toMatch(/^[0-9a-f]{8}$/);
    // The user messages say which inbox items they hold.
    expect(
      entries.filter((e) => e.type === "message" && e.message.role === "user").every((e) => "inbox" in e),
    ).toBe(true);
    await expectSameAtEveryLeaf(text, dir, app.store, threadKey, sessionId);
    expect(meta).toMatchObject({ model: "alpha/one", thinkingLevel: "off" });
  });
});
