import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentToolResult } from "../../src/agent/types.js";
import { createBashTool } from "../../src/extensions/tools/bash.js";

let ws: string;

beforeAll(async () => {
  ws = await realpath(await mkdtemp(join(tmpdir(), "sb-bash-")));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

function textOf(result: AgentToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/** Whether `pid` is a running process. A zombie (killed, waiting for a reaper that may never come in a container) counts as gone. */
function alive(pid: number): boolean {
  if (existsSync("/proc")) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return !/^\d+ \(.*\) [ZX]/.test(stat);
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Bounded poll (the kill is asynchronous at the OS level). */
async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
}

/** The pid the command wrote to `file` (bounded poll until the line is complete). */
async function childPid(file: string): Promise<number> {
  let text = "";
  const ok = await waitFor(() => {
    text = existsSync(file) ? readFileSync(file, "utf8") : "";
    return /^\d+\n/.test(text);
  }, 5000);
  expect(ok).toBe(true);
  return Number(text.trim());
}

describe("bash", () => {
  it("runs in the workspace and returns the output", async () => {
    const bash = createBashTool(async () => ws);
    const out = await bash.execute("b1", { command: "pwd; echo to-stderr >&2; echo $HOME" });
    // stderr is interleaved with stdout in order, as in a terminal.
    expect(textOf(out)).toBe(`${ws}\nto-stderr\n${ws}\n`);
    expect(out.details).toMatchObject({ exitCode: 0, timedOut: false, truncated: false });
  });

  it("a failing command is an error with its output and exit code", async () => {
    const bash = createBashTool(async () => ws);
    await expect(bash.execute("b1", { command: "echo partial; exit 3" })).rejects.toThrow(
      "partial\n\n\nCommand exited with code 3.",
    );
  });

  it("does not pass the gateway's secrets to the command", async () => {
    process.env.SB_TEST_SECRET_TOKEN = "xoxb-secret";
    try {
      const bash = createBashTool(async () => ws, { env: { GIT_AUTHOR_NAME: "bot" } });
      const out = textOf(await bash.execute("b1", { command: "env" }));
      expect(out).not.toContain("xoxb-secret");
      expect(out).toContain("GIT_AUTHOR_NAME=bot");
    } finally {
      delete process.env.SB_TEST_SECRET_TOKEN;
    }
  });

  it("caps output keeping the head and the tail", async () => {
    const bash = createBashTool(async () => ws, { maxOutputBytes: 1000 });
    const out = await bash.execute("b1", { command: "echo START; seq 1 20000; echo END" });
    const text = textOf(out);
    expect(text.startsWith("START\n1\n2\n")).toBe(true);
    expect(text.endsWith("20000\nEND\n")).toBe(true);
    expect(text).toMatch(/\[… \d+ bytes of output omitted …\]/);
    expect(text.length).toBeLessThan(1100);
    expect(out.details).toMatchObject({ truncated: true });
  });

  it("reports progress as updates", async () => {
    const bash = createBashTool(async () => ws, { updateIntervalMs: 0 });
    const updates: string[] = [];
    await bash.execute("b1", { command: "echo one; sleep 0.05; echo two" }, undefined, (u) =>
      updates.push(textOf(u)),
    );
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.at(-1)).toContain("two");
  });

  it("a timeout kills the whole process tree within a second", async () => {
    const bash = createBashTool(async () => ws, { defaultTimeoutMs: 300 });
    const pidFile = join(ws, "timeout.pid");
    const started = Date.now();
    const run = bash.execute("b1", { command: `sleep 30 & echo $! > ${pidFile}; echo waiting; wait` });
    await expect(run).rejects.toThrow(/^waiting\n\n\nCommand timed out after \d+ s and was killed\.$/);
    expect(Date.now() - started).toBeLessThan(1300);
    const pid = await childPid(pidFile);
    expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  });

  it("an abort kills the whole process tree within a second", async () => {
    const bash = createBashTool(async () => ws);
    const pidFile = join(ws, "abort.pid");
    const controller = new AbortController();
    const run = bash.execute(
      "b1",
      { command: `(sleep 30; echo never) & echo $! > ${pidFile}; sleep 30` },
      controller.signal,
    );
    const pid = await childPid(pidFile);
    expect(alive(pid)).toBe(true);
    const abortedAt = Date.now();
    controller.abort();
    await expect(run).rejects.toThrow("Command aborted: the run was stopped and the command was killed.");
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  });

  it("background jobs left behind by a finished command are ended", async () => {
    const bash = createBashTool(async () => ws);
    const pidFile = join(ws, "bg.pid");
    const out = await bash.execute("b1", { command: `sleep 30 & echo $! > ${pidFile}; echo done` });
    expect(textOf(out)).toBe("done\n");
    const pid = await childPid(pidFile);
    expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  });
});
