/**
 * Redis commands and Redis's own time per message, measured by the server (`INFO commandstats`
 * from `CONFIG RESETSTAT` at a phase's start to its end, every connection of the pipeline
 * included; the bench's own INFO, SCAN, CONFIG and SLOWLOG calls left out):
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
 * Each phase runs three times, on chats of its own (new ones for each phase that wakes a new
 * thread), so that no run's tooling is in another's figures (../lib/redis-time.ts):
 * - clean: commandstats' calls (the executed commands) and `usec` (Redis's own time);
 * - profiled: SLOWLOG at threshold 0 says which calls were sent and which a script ran, and each
 *   script's time (the heaviest scripts);
 * - watched: MONITOR splits the count into the commands on BullMQ's keys (its job lifecycle: add,
 *   move to active, move to finished, the worker's polls) and the commands the processes sent (a
 *   script counts once, its inner commands not; auto-pipelining sends several in one write).
 * MONITOR and the slow log each cost Redis time inside a script's run, so neither is on during
 * the clean run.
 *
 * Needs a Redis no one else uses during the phase (the bench's throwaway server), since the
 * counts and times are server-wide (and the stats are reset).
 */
import type { Redis } from "ioredis";
import { createRedisClient, type RedisClient } from "../../src/queue/redis/client.js";
import { type Pipeline, startPipeline, until } from "../lib/pipeline.js";
import {
  type CleanPhase,
  type Counts,
  executed,
  heaviest,
  type ProfiledPhase,
  redisTime,
  ScriptNames,
  type ScriptTime,
  scriptTimes,
  startClean,
  startProfile,
} from "../lib/redis-time.js";

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
  /** Redis's own time per message, µs (commandstats `usec`; a script once, with what it ran). */
  idleWakeUsec: number;
  idleExistingUsec: number;
  intoRunningUsec: number;
  /** The commands of the idle-wake phase per message, by name, largest first. */
  idleTop: string;
  intoRunningTop: string;
  /** The heaviest scripts per message (`name [keys] ×calls µs`), by Redis time. */
  idleWakeScripts: string;
  idleExistingScripts: string;
  intoRunningScripts: string;
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

/** Script names, learnt once per bench process (the throwaway server loads each script once). */
const names = new ScriptNames();
let bullmqNamed = false;

/** A phase with nothing but commandstats on. */
async function clean(redis: RedisClient, p: Pipeline, run: () => Promise<void>): Promise<CleanPhase> {
  await allReleased(redis, p);
  const stop = await startClean(redis);
  await run();
  await allReleased(redis, p);
  return stop();
}

/** A phase with every command in the slow log. */
async function profiled(redis: RedisClient, p: Pipeline, run: () => Promise<void>): Promise<ProfiledPhase> {
  await allReleased(redis, p);
  const stop = await startProfile(redis, names, p.prefix);
  await run();
  await allReleased(redis, p);
  return stop();
}

/** From MONITOR: commands executed on BullMQ's keys, and commands sent (not from a script). */
interface Watched {
  bull: number;
  sent: number;
}

const OWN = new Set(["scan", "info", "monitor"]);

async function watched(redis: RedisClient, p: Pipeline, run: () => Promise<void>): Promise<Watched> {
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
  await run();
  await allReleased(redis, p);
  monitor.disconnect();
  return { bull, sent };
}

/** `after − before`, by key (the running thread's marginal message). */
function minus(after: Counts, before: Counts): Counts {
  const out: Counts = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out.set(k, d);
  }
  return out;
}

function scriptsMinus(
  after: Map<string, ScriptTime>,
  before: Map<string, ScriptTime>,
): Map<string, ScriptTime> {
  const out = new Map<string, ScriptTime>();
  for (const [k, s] of after) {
    const b = before.get(k);
    out.set(k, {
      name: s.name,
      calls: s.calls - (b?.calls ?? 0),
      usec: s.usec - (b?.usec ?? 0),
      inner: s.inner - (b?.inner ?? 0),
    });
  }
  return out;
}

/** One sample: `threads` chats for the idle-wake figure, `threads` for the running-thread one. */
export async function runCommandCount(
  redisUrl: string,
  threads: number,
  streamMs: number,
): Promise<CommandSample> {
  if (!bullmqNamed) {
    await names.loadBullmq();
    names.loadOwn();
    bullmqNamed = true;
  }
  const redis = createRedisClient({ url: redisUrl }, { maxRetriesPerRequest: null });
  // No lost-wake sweep during the section: it runs on its own clock, and its cleanup of the threads
  // a phase touched (PROBE and UNPEND once each has been quiet for 5 s) would land in whichever
  // phase came 5-10 s later. It is a cost per quiet thread, not per message (docs/performance.md).
  const p = await startPipeline({ mode: "redis", redisUrl, sweepIntervalMs: 10 * 60_000 });
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

    const newChats = () => Array.from({ length: threads }, () => chat++);
    const wakeEach = (chats: number[], text: string) => async () => {
      const tags: string[] = [];
      for (const c of chats) {
        const t = newTag();
        tags.push(t);
        p.inject(c, `${text} [${t}]`);
        // Spaced so that each message finds its thread idle and the worker not busy.
        await new Promise((r) => setTimeout(r, 20));
      }
      await until(replied(tags), 60_000, "every idle-wake reply");
    };
    // Each phase starts once every lease is released: each thread is idle again.
    const cleanChats = newChats();
    const idle = await clean(redis, p, wakeEach(cleanChats, "hello"));
    const existing = await clean(redis, p, wakeEach(cleanChats, "and again"));
    const profiledChats = newChats();
    const idleProfiled = await profiled(redis, p, wakeEach(profiledChats, "hello"));
    const existingProfiled = await profiled(redis, p, wakeEach(profiledChats, "and again"));
    const watchedChats = newChats();
    const idleWatched = await watched(redis, p, wakeEach(watchedChats, "hello"));
    const existingWatched = await watched(redis, p, wakeEach(watchedChats, "and again"));

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
    const alone = await clean(redis, p, streaming(false));
    const withSecond = await clean(redis, p, streaming(true));
    const aloneProfiled = await profiled(redis, p, streaming(false));
    const withSecondProfiled = await profiled(redis, p, streaming(true));
    const aloneWatched = await watched(redis, p, streaming(false));
    const withSecondWatched = await watched(redis, p, streaming(true));
    const marginal = minus(withSecond.calls, alone.calls);
    return {
      idleWake: executed(idle) / threads,
      idleExisting: executed(existing) / threads,
      intoRunning: total(marginal) / threads,
      idleWakeBull: idleWatched.bull / threads,
      idleExistingBull: existingWatched.bull / threads,
      intoRunningBull: (withSecondWatched.bull - aloneWatched.bull) / threads,
      idleWakeSent: idleWatched.sent / threads,
      idleExistingSent: existingWatched.sent / threads,
      intoRunningSent: (withSecondWatched.sent - aloneWatched.sent) / threads,
      idleWakeUsec: redisTime(idle, idleProfiled) / threads,
      idleExistingUsec: redisTime(existing, existingProfiled) / threads,
      intoRunningUsec:
        (redisTime(withSecond, withSecondProfiled) - redisTime(alone, aloneProfiled)) / threads,
      idleTop: top(idle.calls, threads),
      intoRunningTop: top(marginal, threads),
      idleWakeScripts: heaviest(scriptTimes(idle, idleProfiled), threads),
      idleExistingScripts: heaviest(scriptTimes(existing, existingProfiled), threads),
      intoRunningScripts: heaviest(
        scriptsMinus(scriptTimes(withSecond, withSecondProfiled), scriptTimes(alone, aloneProfiled)),
        threads,
      ),
    };
  } finally {
    await p.close();
    await redis.quit().catch(() => {});
  }
}
