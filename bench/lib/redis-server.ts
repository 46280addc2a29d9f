/**
 * A throwaway `redis-server` for the benchmark and the fault suite: on a free loopback port in a
 * temp dir, optionally with AOF (`appendfsync always`, so an acknowledged write survives a
 * SIGKILL), killable and restartable on the same port and dir. `useRedis()` prefers `REDIS_URL`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export async function ping(url: string): Promise<boolean> {
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

export function freePort(): Promise<number> {
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

export class RedisServer {
  readonly url: string;
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly aof: boolean,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  /** Starts a server; `aof` turns on `appendonly yes` with `appendfsync always`. */
  static async start(opts: { aof?: boolean } = {}): Promise<RedisServer> {
    const s = new RedisServer(
      await freePort(),
      mkdtempSync(join(tmpdir(), "sb-bench-redis-")),
      opts.aof ?? false,
    );
    await s.launch();
    return s;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private async launch(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--dir", this.dir];
    args.push(...(this.aof ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]));
    const child = spawn("redis-server", args, { stdio: "ignore" });
    this.child = child;
    const failed = new Promise<Error>((resolve) => child.once("error", resolve));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await Promise.race([failed, ping(this.url)]);
      if (r === true) return;
      if (r instanceof Error) {
        throw new Error(
          `Could not start redis-server (${r.message}). Install it (apt-get install -y redis-server) or set REDIS_URL.`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`redis-server did not answer on port ${this.port} within 10 s.`);
      await new Promise((res) => setTimeout(res, 30));
    }
  }

  /** Kills the server (SIGKILL by default) and waits for it to exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once("exit", () => r()));
    c.kill(signal);
    await exited;
    this.child = undefined;
  }

  /** Starts the server again on the same port and dir (the AOF is replayed). */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill("SIGTERM");
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `REDIS_URL` when it answers, else a throwaway server (returned so the caller stops it). */
export async function useRedis(opts: { aof?: boolean } = {}): Promise<{ url: string; server?: RedisServer }> {
  const url = process.env.REDIS_URL;
  if (url && !opts.aof) {
    if (!(await ping(url)))
      throw new Error(`REDIS_URL=${url} does not answer PING. Start Redis there or unset REDIS_URL.`);
    return { url };
  }
  const server = await RedisServer.start(opts);
  return { url: server.url, server };
}
