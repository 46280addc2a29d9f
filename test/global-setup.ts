/**
 * Makes a real Redis available to every test: `REDIS_URL` when set, otherwise a throwaway
 * `redis-server` on a free loopback port, stopped when the run ends. Tests read the URL with
 * `inject("redisUrl")`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    redisUrl: string;
  }
}

async function ping(url: string): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
  });
  r.on("error", () => {});
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

let child: ChildProcess | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (url) {
    if (!(await ping(url)))
      throw new Error(`REDIS_URL=${url} does not answer PING. Start Redis there or unset REDIS_URL.`);
  } else {
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), "sb-test-redis-"));
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" },
    );
    const spawned = child;
    const failed = new Promise<Error>((resolve) => spawned.once("error", resolve));
    url = `redis://127.0.0.1:${port}`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const err = await Promise.race([failed, ping(url).then((ok) => (ok ? null : undefined))]);
      if (err === null) break;
      if (err instanceof Error) {
        throw new Error(
          `Could not start redis-server (${err.message}). Install it (Debian: apt-get install -y redis-server) or set REDIS_URL.`,
        );
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port} within 10 s.`);
      await new Promise((r) => setTimeout(r, 50));
    }
    process.env.REDIS_URL = url;
  }
  project.provide("redisUrl", url);
}

export async function teardown(): Promise<void> {
  child?.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
}
