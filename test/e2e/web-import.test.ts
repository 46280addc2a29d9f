/**
 * `switchboard import` without `--thread`, as a person moving a conversation over: the session
 * becomes a web chat conversation that the page lists (named after its first message), opens at its
 * address with the imported turns, and continues: the model's next request carries the history.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebClient } from "../adapters/web/client.js";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";
import { CliProcess } from "./support/cli-process.js";
import { switchboard } from "./support/cli-run.js";
import { lastUserText, until } from "./support/world.js";

let llm: FakeLlmServer;
let dir: string;
beforeAll(async () => {
  llm = await startFakeLlmServer();
  llm.respondWith("openai-completions", (r) => ({ text: `echo: ${lastUserText(r)}` }));
  dir = mkdtempSync(join(tmpdir(), "sb-web-import-"));
  writeFileSync(
    join(dir, "switchboard.yaml"),
    [
      "models:",
      "  default: fake/fake-1",
      "  custom:",
      `    - { provider: fake, id: fake-1, api: openai-completions, baseUrl: "${llm.baseUrl("openai-completions")}" }`,
      "logging:",
      "  level: warn",
    ].join("\n"),
  );
});
afterAll(async () => {
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SESSION = [
  {
    type: "session",
    version: 3,
    id: "5f0c3a1e-2b7d-4c9a-8e1f-0a2b3c4d5e6f",
    timestamp: "2025-05-01T09:30:00.000Z",
    cwd: "x",
  },
  {
    type: "message",
    id: "a0000001",
    parentId: null,
    timestamp: "2025-05-01T09:30:01.000Z",
    message: {
      role: "user",
      content: [{ type: "text", text: "Plan the release of version 2" }],
      timestamp: 1,
    },
  },
  {
    type: "message",
    id: "a0000002",
    parentId: "a0000001",
    timestamp: "2025-05-01T09:30:02.000Z",
    message: {
      role: "assistant",
      content: [{ type: "text", text: "First freeze the branch, then **tag** it." }],
      api: "openai-completions",
      provider: "fake",
      model: "fake-1",
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: 2,
    },
  },
];

describe("an imported session in the web chat", () => {
  it("is listed, opens at its address with its turns, and continues with its history", async () => {
    writeFileSync(join(dir, "release.jsonl"), `${SESSION.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const imported = await switchboard(["import", "release.jsonl"], { cwd: dir });
    expect(imported.code, imported.stderr).toBe(0);
    const [, id] = /into thread web:(c[a-z0-9]+) /.exec(imported.stdout) ?? [];
    expect(id).toBeDefined();
    expect(imported.stdout).toContain(
      `the web chat lists it as "Plan the release of version 2": http://127.0.0.1:8787/c/${id}`,
    );

    const p = new CliProcess(["start", "--port", "0"], { cwd: dir, env: {} });
    try {
      const [, link] = await p.waitForLine(/^Web chat: (http:\/\/\S+)$/);
      const client = await WebClient.open(link as string);
      const { conversations } = await client.call<{ conversations: { id: string; title: string }[] }>(
        "GET",
        "api/conversations",
      );
      expect(conversations).toContainEqual(
        expect.objectContaining({ id, title: "Plan the release of version 2" }),
      );
      // The page's address for it answers (the web chat's own pattern accepts the id).
      const page = await client.request("GET", `c/${id}`);
      expect(page.status).toBe(200);
      const { messages } = await client.call<{ messages: { text: string; from: { isBot: boolean } }[] }>(
        "GET",
        `api/conversations/${id}/messages`,
      );
      expect(messages.map((m) => [m.from.isBot, m.text])).toEqual([
        [false, "Plan the release of version 2"],
        [true, "First freeze the branch, then **tag** it."],
      ]);

      await client.call("POST", `api/conversations/${id}/messages`, { text: "and then?" });
      const request = await until(
        () => llm.requests.find((r) => lastUserText(r).includes("and then?")),
        "the model request of the next message",
      );
      expect(JSON.stringify(request.body.messages)).toContain("Plan the release of version 2");
      expect(JSON.stringify(request.body.messages)).toContain("First freeze the branch");
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });
});
