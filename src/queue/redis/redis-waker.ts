/**
 * Wake jobs on BullMQ, and the sweeper: the safety net for a thread whose wake was lost (a process
 * died between the inbox append and the job add, or a stalled job ran out of recoveries).
 */
import { randomUUID } from "node:crypto";
import type { Queue } from "bullmq";
import type { Clock } from "../../agent/clock.js";
import type { RuntimeKeys } from "../../redis-keys.js";
import type { Waker } from "../state/types.js";
import type { RedisClient } from "./client.js";
import { probeThread } from "./redis-thread-state.js";
import { runScript } from "./run-script.js";
import { UNPEND } from "./scripts.js";

/** Data of a wake job. */
export interface WakeJobData {
  thread: string;
}

/**
 * The id of the wake job for a thread's wake flag: unique per flag (flags carry a time and a seq or
 * a random part), without ':' (BullMQ refuses it in custom ids).
 */
function wakeJobId(threadKey: string, flag: string): string {
  return `${encodeURIComponent(threadKey)}/${encodeURIComponent(flag)}`;
}

/** Job states in which a wake job will still run. */
const LIVE_STATES = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

export class RedisWaker implements Waker {
  constructor(
    private readonly redis: RedisClient,
    private readonly queue: Queue<WakeJobData>,
    private readonly keys: RuntimeKeys,
    private readonly clock: Clock,
  ) {}

  /**
   * Adds a wake job for a thread whose flag holds `marker`. The job's id is derived from the thread
   * and the flag (`wakeJobId`), so the flag itself tells the sweeper which job to look for: no
   * second write records the id. Without `marker` it re-wakes: it sets a fresh flag first,
   * whatever was there. Adding the same flag's job twice adds it once (BullMQ keeps one job per id).
   */
  async wake(threadKey: string, marker?: string): Promise<void> {
    const wakeKey = this.keys.thread(threadKey).wake;
    let flag = marker;
    if (!flag) {
      const now = this.clock.now();
      flag = `rewake:${now}:${randomUUID().slice(0, 8)}`;
      await Promise.all([this.redis.set(wakeKey, flag), this.redis.zadd(this.keys.pending, now, threadKey)]);
    }
    await this.queue.add(
      "wake",
      { thread: threadKey },
      // Nothing reads a finished job (a failure is reported by the worker's "failed" handler, and
      // the sweeper treats a job it cannot find as gone): removed at once.
      { jobId: wakeJobId(threadKey, flag), attempts: 1, removeOnComplete: true, removeOnFail: true },
    );
  }

  /**
   * One sweep of the `pending` set: threads untouched for `minAgeMs` with nothing queued leave
   * it; threads with queued or inflight items, no lease and no live wake job are woken again.
   * Returns the threads it woke.
   */
  async sweep(minAgeMs: number, limit = 500): Promise<string[]> {
    const now = this.clock.now();
    const rows = await this.redis.zrangebyscore(
      this.keys.pending,
      "-inf",
      now - minAgeMs,
      "WITHSCORES",
      "LIMIT",
      0,
      limit,
    );
    const woken: string[] = [];
    for (let i = 0; i + 1 < rows.length; i += 2) {
      const threadKey = rows[i] as string;
      const score = rows[i + 1] as string;
      const probe = await probeThread(this.redis, this.keys, threadKey);
      if (probe.inboxDepth + probe.inflightDepth === 0) {
        await runScript(this.redis, UNPEND, [this.keys.pending], [threadKey, score]);
        continue;
      }
      if (probe.active) continue;
      const flag = probe.wakeFlag;
      if (flag) {
        // "job:<id>": a flag an earlier version recorded its job's id in.
        const id = flag.startsWith("job:") ? flag.slice(4) : wakeJobId(threadKey, flag);
        if (LIVE_STATES.has(await this.queue.getJobState(id))) continue;
        // The job of a fresh flag may still be on its way (the adder set the flag first).
        const setAt = Number(flag.split(":")[1]);
        if (Number.isFinite(setAt) && now - setAt < minAgeMs) continue;
      }
      await this.wake(threadKey);
      woken.push(threadKey);
    }
    return woken;
  }
}
