/**
 * Launch → polling: from spawning the compiled `switchboard start` (`node bin/switchboard.js start`,
 * what `npm start` and the Docker image run) with a config that enables Telegram against the fake
 * Bot API, to the fake receiving the first `getUpdates`; then the process's RSS one second later.
 * dist/ is rebuilt first when src/ is newer, so the figure never describes a stale build.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeTelegram } from "../../test/fakes/telegram/server.js";
import { freePort } from "../lib/redis-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin", "switchboard.js");
const ENTRY = join(ROOT, "dist", "main.js");

/** Resident set size of a process from /proc (Linux), in MB; NaN elsewhere. */
function rssOf(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function newestUnder(dir: string): number {
  let latest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) latest = Math.max(latest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return latest;
}

/** Builds dist/ (`npm run build`) unless it is newer than every file under src/. */
export function ensureBuilt(log: (text: string) => void): void {
  if (existsSync(ENTRY) && statSync(ENTRY).mtimeMs >= newestUnder(join(ROOT, "src"))) return;
  log("dist/ is missing or older than src/: building (npm run build)");
  const r = spawnSync(process.execPath, [join(ROOT, "scripts", "build.js")], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`the build failed (exit ${r.status})`);
}

export interface LaunchSample {
  /** Spawn → first getUpdates at the fake, in ms. */
  ms: number;
  /** RSS of the process one second after that, in MB. */
  rssMb: number;
}

/** One launch of the compiled CLI against a fresh fake Bot API, in embedded mode. */
export async function launchToPolling(): Promise<LaunchSample> {
  const fake = await new FakeTelegram().start();
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-launch-"));
  const port = await freePort();
  const config = join(dir, "switchboard.yaml");
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
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, "start", "--config", config], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, TELEGRAM_BOT_TOKEN: fake.token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
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
      if (child.exitCode !== null) {
        throw new Error(
          `switchboard start exited ${child.exitCode}: ${stderr.trim().split("\n").slice(-3).join(" ")}`,
        );
      }
      if (Date.now() > deadline) throw new Error(`no getUpdates within 15 s: ${stderr.trim().slice(-300)}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    }
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
