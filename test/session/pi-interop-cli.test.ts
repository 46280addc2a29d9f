/**
 * `switchboard import` and `switchboard export` as child processes (files, no Redis): a session
 * file written by pi's own `SessionManager` comes back byte for byte, header included, and pi
 * opens the export with the same entries.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../e2e/support/cli-process.js";
import { type PiSession, writePiSession } from "./pi-interop.js";

let cwd: string;
let pi: PiSession;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "sb-pi-cli-"));
  pi = writePiSession();
});
afterAll(() => {
  pi.dispose();
  rmSync(cwd, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = new CliProcess(args, { cwd, env: {} });
  const code = await p.exited;
  return { code, stdout: p.lines.join("\n"), stderr: p.stderr.join("\n") };
}

describe("switchboard import / export with a pi session", () => {
  it("gives pi's file back byte for byte, and pi opens the export with the same entries", async () => {
    const file = join(pi.dir, "from-pi.jsonl");
    writeFileSync(file, pi.text);
    const imported = await run(["import", file, "--thread", "web:cfrompi"]);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain("into thread web:cfrompi");

    const out = join(cwd, "back.jsonl");
    const exported = await run(["export", "web:cfrompi", "--output", out]);
    expect(exported.code).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(text).toBe(pi.text);
    const [header] = text.split("\n");
    expect(JSON.parse(header as string)).toMatchObject({ cwd: "/home/ada/project" });
    expect(SessionManager.open(out, pi.dir).getEntries()).toEqual(
      SessionManager.open(file, pi.dir).getEntries(),
    );
  });
});
