/**
 * `switchboard check` as a child process against the fake model server: each configured model gets a
 * one-token request and check says what came back (the answer, or the provider's error naming what
 * arrived); `--offline` sends nothing. And the CLI's output into a closed pipe (`… | head -1`) ends
 * quietly, exit 0, without an EPIPE stack trace.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../fakes/llm-server.js";
import { runProcess, switchboard } from "./support/cli-run.js";

const repo = join(import.meta.dirname, "..", "..");
const tsx = join(repo, "node_modules", ".bin", "tsx");
const main = join(repo, "src", "main.ts");

let llm: FakeLlmServer;
const dirs: string[] = [];
beforeAll(async () => {
  llm = await startFakeLlmServer();
});
afterAll(async () => {
  await llm?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sb-check-models-"));
  dirs.push(dir);
  writeFileSync(join(dir, "switchboard.yaml"), yaml);
  return dir;
}

/** A config with one custom model served by the fake on the OpenAI chat completions route. */
function modelConfig(): string {
  return [
    "models:",
    "  default: fake/fake-1",
    "  custom:",
    "    - provider: fake",
    "      id: fake-1",
    "      api: openai-completions",
    `      baseUrl: ${llm.baseUrl("openai-completions")}`,
    "      maxTokens: 4096",
  ].join("\n");
}

describe("switchboard check and the configured models", () => {
  it("sends each model a one-token request and says what came back (exit 0)", async () => {
    const cwd = freshDir(modelConfig());
    llm.enqueue("openai-completions", { text: "OK", usage: { input: 12, output: 1 }, stopReason: "length" });
    const before = llm.requests.length;
    const r = await switchboard(["check", "--port", "0"], { cwd });
    expect(r.stdout).toMatch(/✓ model fake\/fake-1: answered "OK" in \d+\.\d s \(length, 1 output token\)/);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const sent = llm.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({ model: "fake-1", max_tokens: 1 });
  });

  it("names the status, content type and first bytes of an answer that is not an event stream (exit 1)", async () => {
    const cwd = freshDir(modelConfig());
    llm.enqueue("openai-completions", {
      rawAnswer: { contentType: "text/html", body: "<html><body>Please sign in to the proxy</body></html>" },
    });
    const r = await switchboard(["check", "--port", "0"], { cwd });
    expect(r.stdout).toContain(
      "✗ model fake/fake-1: fake (OpenAI-compatible) answered HTTP 200 with text/html instead of an event stream: <html><body>Please sign in to the proxy</body></html>",
    );
    expect(r.code).toBe(1);
  });

  it("a key the server refuses is a config error (exit 2)", async () => {
    const cwd = freshDir(modelConfig());
    llm.enqueue("openai-completions", { httpError: { status: 401, message: "Incorrect API key provided" } });
    const r = await switchboard(["check", "--port", "0"], { cwd });
    expect(r.stdout).toMatch(/✗ model fake\/fake-1: .*HTTP 401.*Incorrect API key provided/);
    expect(r.stdout).toContain("credentials or model ids in the config were refused");
    expect(r.code).toBe(2);
  });

  it("--offline sends nothing", async () => {
    const cwd = freshDir(modelConfig());
    const before = llm.requests.length;
    const r = await switchboard(["check", "--offline", "--port", "0"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Reachability: not checked (--offline).");
    expect(llm.requests.length).toBe(before);
  });
});

describe("output into a closed pipe", () => {
  /** `switchboard args | head -1` in bash with pipefail: the pipeline's exit code is switchboard's. */
  function piped(args: string, cwd: string) {
    return runProcess("bash", ["-c", `set -o pipefail; ${tsx} ${main} ${args} | head -1`], { cwd });
  }

  it("check --offline | head -1 prints the first line and ends quietly (exit 0)", async () => {
    const cwd = freshDir("logging:\n  level: warn\n");
    const r = await piped("check --offline --port 0", cwd);
    expect(r.stdout).toMatch(/^Config: .*switchboard\.yaml\n$/);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("export of a long session | head -1 ends quietly (exit 0), no EPIPE stack trace", async () => {
    const cwd = freshDir("logging:\n  level: warn\n");
    const header = {
      type: "session",
      version: 3,
      id: "0b6f4c1e-8a53-4d1e-9c3a-5e2b7d9f1a00",
      timestamp: "2025-05-01T09:30:00.000Z",
      cwd: "x",
    };
    const lines = [JSON.stringify(header)];
    for (let i = 0; i < 3000; i++) {
      lines.push(
        JSON.stringify({
          type: "message",
          id: `e${String(i).padStart(7, "0")}`,
          parentId: i === 0 ? null : `e${String(i - 1).padStart(7, "0")}`,
          timestamp: "2025-05-01T09:30:01.000Z",
          message: {
            role: "user",
            content: [{ type: "text", text: `line ${i} ${"x".repeat(200)}` }],
            timestamp: 1,
          },
        }),
      );
    }
    writeFileSync(join(cwd, "long.jsonl"), `${lines.join("\n")}\n`);
    const imported = await switchboard(["import", "long.jsonl", "--thread", "web:clong00000"], { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    const r = await piped("export web:clong00000", cwd);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: "session" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
