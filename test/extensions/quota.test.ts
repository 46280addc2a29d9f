/**
 * The workspace quota (`tools.sandbox.limits.workspaceMb`) through the tools a model calls, with the
 * sandbox and without: `write` and `edit` are refused exactly, a `bash` file can be no larger than
 * what is left, a command that passes the quota with many files is stopped, and deleting makes room.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { chown, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CommandRunner,
  createBuiltinTools,
  createDirectRunner,
  DEFAULT_LIMITS,
  diskUsage,
} from "../../src/extensions/tools/index.js";
import { bwrapRunner, bwrapUnavailable } from "../support/sandbox.js";

const unavailable = await bwrapUnavailable();
const MB = 1024 * 1024;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "sb-quota-"));
  chmodSync(root, 0o755);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const runners: [string, string | undefined, () => Promise<CommandRunner>][] = [
  ["the sandbox", unavailable, () => bwrapRunner({ limits: { workspaceMb: 4 } })],
  [
    "no sandbox",
    undefined,
    async () =>
      createDirectRunner({
        limits: { ...DEFAULT_LIMITS, workspaceMb: 4 },
        ...(process.getuid?.() === 0 ? { account: { uid: 65534, gid: 65534 } } : {}),
      }),
  ],
];

function textOf(r: { content: { type: string; text?: string }[] }): string {
  return r.content.map((c) => c.text ?? "").join("");
}

/** Runs `command` with bash; resolves with its text, error or not. */
async function bash(tools: ReturnType<typeof createBuiltinTools>, command: string): Promise<string> {
  try {
    return textOf(await tools.bash.execute("b", { command }));
  } catch (e) {
    return (e as Error).message;
  }
}

describe.each(runners)("the workspace quota (%s)", (_name, skip, make) => {
  let seq = 0;
  async function setUp() {
    const runner = await make();
    const ws = join(root, `ws-${++seq}-${_name.replace(/ /g, "-")}`);
    await mkdir(ws);
    if (runner.owner) await chown(ws, runner.owner.uid, runner.owner.gid);
    return { ws, tools: createBuiltinTools(ws, { bash: { runner } }) };
  }

  it.skipIf(skip !== undefined)("write and edit are refused exactly at the quota, saying so", async () => {
    const { tools } = await setUp();
    await tools.write.execute("w", { path: "a.txt", content: "a".repeat(3 * MB) });
    await expect(tools.write.execute("w", { path: "b.txt", content: "b".repeat(2 * MB) })).rejects.toThrow(
      /Not written: b\.txt \(2\.0 MB\) would take the workspace to .* past its 4 MB quota \(tools\.sandbox\.limits\.workspaceMb\)/,
    );
    // Replacing a file counts what it frees.
    await tools.write.execute("w", { path: "a.txt", content: `${"a".repeat(3 * MB)}<here>` });
    await expect(
      tools.edit.execute("e", { path: "a.txt", oldText: "<here>", newText: "c".repeat(2 * MB) }),
    ).rejects.toThrow(/past its 4 MB quota/);
  });

  it.skipIf(skip !== undefined)(
    "no file bash writes can pass what is left; deleting makes room",
    async () => {
      const { ws, tools } = await setUp();
      const big = await bash(tools, "head -c 6000000 /dev/zero > big.bin");
      expect(big).toContain("The workspace uses 4.0 MB of its 4 MB quota (tools.sandbox.limits.workspaceMb)");
      expect(await diskUsage(ws)).toBeLessThanOrEqual(4 * MB + 64 * 1024);
      expect(await bash(tools, "echo more > more.txt")).toContain("so writes are refused");
      expect(await bash(tools, "rm big.bin && echo gone")).toBe("gone\n");
      expect(await bash(tools, "head -c 1000 /dev/zero > small.bin && echo written")).toBe("written\n");
    },
  );

  it.skipIf(skip !== undefined)("a command that passes the quota with many files is stopped", async () => {
    const { tools } = await setUp();
    // 1 MB every 0.1 s: past 4 MB within a second; the watch measures every 2 s at the least.
    const out = await bash(
      tools,
      "for i in $(seq 100); do head -c 1000000 /dev/zero > f$i; sleep 0.1; done; echo finished",
    );
    expect(out).not.toContain("finished");
    expect(out).toContain(
      "Command stopped: the workspace passed its 4 MB quota (tools.sandbox.limits.workspaceMb)",
    );
  });
});
