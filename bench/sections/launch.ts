/**
 * Launch → polling: from spawning `switchboard start` (`node --import tsx src/main.ts start`, what
 * `tsx src/main.ts start` runs) with a config that enables Telegram against the fake Bot API, to
 * the fake receiving the first `getUpdates`. When the CLI cannot start here, the adapter alone is
 * measured instead and the figure says so.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeTelegram } from "../../test/fakes/telegram/server.js";
import { freePort } from "../lib/redis-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Resident set size of a process from /proc (Linux), in MB; NaN elsewhere. */
function rssOf(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function timeToPoll(
  args: string[],
  env: Record<string, string>,
  fake: FakeTelegram,
): Promise<{ ms?: number; rssMb?: number; why?: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (fake.calls.some((c) => c.method === "getUpdates")) {
        const ms = performance.now() - t0;
        // Settled after start (lazy imports done), before any traffic.
        await new Promise((r) => setTimeout(r, 1000));
        return { ms, rssMb: rssOf(child.pid) };
      }
      if (child.exitCode !== null)
        return { why: `exited ${child.exitCode}: ${stderr.trim().split("\n").slice(-2).join(" ")}` };
      if (Date.now() > deadline) return { why: "no getUpdates within 15 s" };
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    }
  }
}

export async function launchToPolling(): Promise<{ ms: number; rssMb: number; label: string }> {
  const fake = await new FakeTelegram().start();
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-launch-"));
  try {
    const config = join(dir, "switchboard.yaml");
    const port = await freePort();
    writeFileSync(
      config,
      [
        "channels:",
        "  telegram:",
        `    apiRoot: ${fake.apiRoot()}`,
        "http:",
        `  port: ${port}`,
        "runtime:",
        `  dataDir: ${join(dir, "data")}`,
        "",
      ].join("\n"),
    );
    const env = { TELEGRAM_BOT_TOKEN: fake.token, REDIS_URL: "" };
    const cli = await timeToPoll(["src/main.ts", "start", "--config", config], env, fake);
    if (cli.ms !== undefined)
      return { ms: cli.ms, rssMb: cli.rssMb ?? Number.NaN, label: "switchboard start, embedded mode" };
    const probe = await timeToPoll(
      ["bench/lib/launch-probe.ts"],
      { ...env, SB_TG_API_ROOT: fake.apiRoot() },
      fake,
    );
    if (probe.ms === undefined) throw new Error(`launch probe failed too: ${probe.why}`);
    return {
      ms: probe.ms,
      rssMb: probe.rssMb ?? Number.NaN,
      label: `adapter alone; CLI start did not poll: ${(cli.why ?? "").slice(0, 120)}`,
    };
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
