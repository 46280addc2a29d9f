/**
 * Every Redis command of one message, from MONITOR: one message that wakes an idle thread (a new
 * one), a second to that thread once it is idle again, then one delivered into a running thread. The second trace also holds the end of the run it was
 * delivered into (the first reply's append, its checkpoints); the bench's `commands` section
 * subtracts that, this trace does not. One line per command: `L` when a script ran it, `-` when a
 * process sent it.
 * Run: npx tsx bench/profile/commands-trace.ts   (a throwaway Redis server; nothing else on it)
 */
import type { Redis } from "ioredis";
import { createRedisClient } from "../../src/queue/redis/client.js";
import { startPipeline, until } from "../lib/pipeline.js";
import { useRedis } from "../lib/redis-server.js";

const { url, server } = await useRedis();
const p = await startPipeline({ mode: "redis", redisUrl: url });
const redis = createRedisClient({ url }, { maxRetriesPerRequest: null });
let seq = 0;
const tag = () => `m${9_500_000 + ++seq}`;
let chat = 900_000;
const warm = Array.from({ length: 5 }, tag);
for (const t of warm) p.inject(chat++, `warm [${t}]`);
await until(() => warm.every((t) => p.model.endedAt.has(t)), 30_000, "warm-up");
await new Promise((r) => setTimeout(r, 300));

async function trace(label: string, run: () => Promise<void>): Promise<void> {
  const monitor = await (redis as Redis).monitor();
  const lines: string[] = [];
  monitor.on("monitor", (_t: string, args: string[], source: string) => {
    const name = String(args[0] ?? "").toLowerCase();
    if (name === "monitor" || name === "scan" || name === "info") return;
    const shown = args.map((a) => (a.length > 60 ? `${a.slice(0, 57)}...` : a)).join(" ");
    lines.push(`${source.includes("lua") ? "L" : "-"} ${shown.replaceAll(p.prefix, "~")}`);
  });
  await run();
  await new Promise((r) => setTimeout(r, 300));
  monitor.disconnect();
  console.log(
    `\n=== ${label}: ${lines.length} commands, ${lines.filter((l) => l.startsWith("-")).length} sent`,
  );
  console.log(lines.join("\n"));
}

const idle = tag();
const idleChat = chat++;
await trace("idle wake, new thread", async () => {
  p.inject(idleChat, `hello [${idle}]`);
  await until(() => p.model.endedAt.has(idle), 10_000, "idle reply");
});
const again = tag();
await trace("idle wake, the same thread again", async () => {
  p.inject(idleChat, `and again [${again}]`);
  await until(() => p.model.endedAt.has(again), 10_000, "second idle reply");
});
const first = tag();
const second = tag();
const c = chat++;
p.inject(c, `stream [${first}] tokens=20 ms=1500`);
await until(() => p.model.requestedAt.has(first), 10_000, "run started");
await new Promise((r) => setTimeout(r, 200));
await trace("into running (delivery up to its reply)", async () => {
  p.inject(c, `and one more [${second}]`);
  await until(() => p.model.endedAt.has(second), 10_000, "second reply");
});
await p.close();
await redis.quit();
await server?.stop();
