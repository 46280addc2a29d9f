/**
 * Redis commands per message, counted by the server (`INFO commandstats` before and after a
 * phase, every connection of the pipeline included; the INFO calls themselves left out):
 *
 * - idle wake: `threads` new private chats get one message each (immediate reply); every command
 *   from the first delivery until the last reply is visible and the worker has let go of every
 *   thread, divided by the messages. That is a message that wakes an idle thread: dedupe, inbox
 *   append, wake job, the job's lifecycle, lease, take, the session writes, settle, release; for a
 *   new thread also its session's creation.
 * - idle wake of a thread that exists: the same chats, once every one is idle again, get a second
 *   message each: a conversation that goes on (no session to create; the worker reuses the agent
 *   it parked, as it does for ten minutes).
 * - into a running thread: the same number of chats each get a reply paced over `streamMs`, once
 *   alone (phase A) and once with a second message delivered while the reply streams (phase B).
 *   (B − A) / chats is what one more message costs when a holder is already running: the delivery
 *   and the holder picking it up at its next checkpoint, with its own reply.
 *
 * MONITOR during each phase splits the count: the commands on BullMQ's keys (its job lifecycle:
 * add, move to active, move to finished, the worker's polls), and the commands the processes sent
 * (a script counts once, its inner commands not; auto-pipelining sends several in one write).
 *
 * Needs a Redis no one else uses during the phase (the bench's throwaway server), since the
 * counts are server-wide.
 */
import type { Redis } from "ioredis";
import { createRedisClient, type RedisClient } from "../../src/queue/redis/client.js";
import { type Pipeline, startPipeline, until } from "../lib/pipeline.js";

export interface CommandSample {
  /** Commands Redis executed (`INFO commandstats`: inside scripts included), per message. */
  idleWake: number;
  idleExisting: number;
  intoRunning: number;
  /** Of those, BullMQ's (its scripts' commands and its worker's polls): the job lifecycle's floor. */
  idleWakeBull: number;
  idleExistingBull: number;
  intoRunningBull: number;
  /** Commands the processes sent (round trips before pipelining; a script counts once), per message. */
  idleWakeSent: number;
  idleExistingSent: number;
  intoRunningSent: number;
  /** The commands of the idle-wake phase per message, by name, largest first. */
  idleTop: string;
  intoRunningTop: string;
}

type Counts = Map<string, number>;

async function commandStats(redis: RedisClient): Promise<Counts> {
  const text = (await redis.info("commandstats")) as string;
  const out: Counts = new Map();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1] as string, Number(m[2]));
  return out;
}

function diff(after: Counts, before: Counts): Counts {
  const out: Counts = new Map();
  for (const [k, v] of after) {
    if (k === "info") continue;
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

const total = (c: Counts) => [...c.values()].reduce((a, b) => a + b, 0);

function top(c: Counts, per: number): string {
  return [...c.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${(v / per).toFixed(1)}`)
    .join(", ");
}

let tagSeq = 0;
// The paced model keys its records by `[m<n>]`; these numbers stay clear of the e2e sections' tags.
const newTag = () => `m${9_000_000 + ++tagSeq}`;

/** Waits until no thread of the pipeline's prefix holds a lease (every tenure released). */
async function allReleased(redis: RedisClient, p: Pipeline): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [, keys] = await redis.scan("0", "MATCH", `${p.prefix}*:lease`, "COUNT", 100_000);
    if (keys.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${keys.length} leases still held 30 s after the last reply`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Measured {
  counts: Counts;
  commands: number;
  /** From MONITOR: commands executed on BullMQ's keys, and commands sent (not from a script). */
  bull: number;
  sent: number;
}

const OWN = new Set(["scan", "info", "monitor"]);

async function measure(redis: RedisClient, p: Pipeline, run: () => Promise<void>): Promise<Measured> {
  await allReleased(redis, p);
  const monitor = await (redis as Redis).monitor();
  let bull = 0;
  let sent = 0;
  // BullMQ's keys are `<prefix>runs:…` (the queue prefix is the key prefix without its colon).
  const bullKey = `${p.prefix}runs:`;
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    const name = String(args[0] ?? "").toLowerCase();
    if (OWN.has(name)) return;
    if (!source.includes("lua")) sent++;
    if (args.some((a) => typeof a === "string" && a.startsWith(bullKey))) bull++;
  });
  const before = await commandStats(redis);
  await run();
  await allReleased(redis, p);
  const counts = diff(await commandStats(redis), before);
  monitor.disconnect();
  // The scans of allReleased are the bench's own.
  counts.delete("scan");
  return { counts, commands: total(counts), bull, sent };
}

/** One sample: `threads` chats for the idle-wake figure, `threads` for the running-thread one. */
export async function runCommandCount(
  redisUrl: string,
  threads: number,
  streamMs: number,
): Promise<CommandSample> {
  const p = await startPipeline({ mode: "redis", redisUrl });
  const redis = createRedisClient({ url: redisUrl }, { maxRetriesPerRequest: null });
  let chat = 700_000 + Math.floor(Math.random() * 100_000) * 10;
  try {
    // Warm-up: scripts loaded, connections open, BullMQ's worker blocking.
    const warm = Array.from({ length: 10 }, () => newTag());
    for (const t of warm) p.inject(chat++, `warm [${t}]`);
    await until(() => warm.every((t) => p.model.endedAt.has(t)), 30_000, "warm-up replies");

    const replied = (tags: string[]) => () => {
      const texts = new Set(p.outbound().map((c) => c.visibleText ?? ""));
      return tags.every((t) => texts.has(`ok [${t}]`) || [...texts].some((x) => x.startsWith(`ok [${t}]`)));
    };

    const idleChats = Array.from({ length: threads }, () => chat++);
    const wakeEach = (text: string) => async () => {
      const tags: string[] = [];
      for (const c of idleChats) {
        const t = newTag();
        tags.push(t);
        p.inject(c, `${text} [${t}]`);
        // Spaced so that each message finds its thread idle and the worker not busy.
        await new Promise((r) => setTimeout(r, 20));
      }
      await until(replied(tags), 60_000, "every idle-wake reply");
    };
    const idle = await measure(redis, p, wakeEach("hello"));
    // measure() starts once every lease is released: each thread is idle again.
    const existing = await measure(redis, p, wakeEach("and again"));

    const streaming = (second: boolean) => async () => {
      const tags: string[] = [];
      const seconds: string[] = [];
      const chats: number[] = [];
      for (let i = 0; i < threads; i++) {
        const t = newTag();
        tags.push(t);
        chats.push(chat);
        p.inject(chat++, `stream [${t}] tokens=20 ms=${streamMs}`);
      }
      // Each chat's second message goes in as soon as its run has asked the model (the reply then
      // streams for streamMs), so it finds the thread running.
      const pending = new Set(tags.map((_t, i) => i));
      const deadline = Date.now() + 30_000;
      while (pending.size > 0) {
        for (const i of pending) {
          if (!p.model.requestedAt.has(tags[i] as string)) continue;
          pending.delete(i);
          if (!second) continue;
          const t = newTag();
          seconds.push(t);
          p.inject(chats[i] as number, `and one more [${t}]`);
        }
        if (Date.now() > deadline) throw new Error("commands bench: runs did not start within 30 s");
        await new Promise((r) => setTimeout(r, 2));
      }
      await until(() => [...tags, ...seconds].every((t) => p.model.endedAt.has(t)), 60_000, "every reply");
      await until(replied([...tags, ...seconds]), 60_000, "every reply visible");
      const foundIdle = seconds.filter((t) => p.idleAt.get(t) !== false).length;
      if (foundIdle > 0)
        throw new Error(
          `commands bench: ${foundIdle} of ${seconds.length} second messages found their thread idle (the machine is too slow for streamMs ${streamMs})`,
        );
    };
    const alone = await measure(redis, p, streaming(false));
    const withSecond = await measure(redis, p, streaming(true));
    const marginal: Counts = new Map();
    for (const [k, v] of withSecond.counts) {
      const d = v - (alone.counts.get(k) ?? 0);
      if (d !== 0) marginal.set(k, d);
    }
    return {
      idleWake: idle.commands / threads,
      idleExisting: existing.commands / threads,
      intoRunning: (withSecond.commands - alone.commands) / threads,
      idleWakeBull: idle.bull / threads,
      idleExistingBull: existing.bull / threads,
      intoRunningBull: (withSecond.bull - alone.bull) / threads,
      idleWakeSent: idle.sent / threads,
      idleExistingSent: existing.sent / threads,
      intoRunningSent: (withSecond.sent - alone.sent) / threads,
      idleTop: top(idle.counts, threads),
      intoRunningTop: top(marginal, threads),
    };
  } finally {
    await p.close();
    await redis.quit().catch(() => {});
  }
}
