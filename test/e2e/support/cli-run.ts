/**
 * Runs `switchboard` to completion as a child process, the way a person at a terminal does: from a
 * directory of their own, with a clean environment. Through tsx on src/main.ts, so an edited source
 * is what runs (test/e2e/cli-compiled.test.ts covers the compiled bin).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

const repo = join(import.meta.dirname, "..", "..", "..");
const tsx = join(repo, "node_modules", ".bin", "tsx");
const main = join(repo, "src", "main.ts");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns `command args…` in `cwd` with only PATH, HOME and `env`, and collects its output. */
export function runProcess(
  command: string,
  args: readonly string[],
  o: { cwd: string; env?: Record<string, string> },
): Promise<CliRun> {
  const child = spawn(command, args, {
    cwd: o.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? o.cwd, ...o.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `switchboard args…` (the TypeScript sources through tsx) in `cwd`. */
export function switchboard(
  args: readonly string[],
  o: { cwd: string; env?: Record<string, string> },
): Promise<CliRun> {
  return runProcess(tsx, [main, ...args], o);
}
