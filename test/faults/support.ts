/**
 * Shared pieces of the fault scenarios: tagged messages, the exactly-once/order audit of thread
 * sessions, and a printed count line per scenario.
 */
import { buildSessionContext } from "../../src/agent/session/context.js";
import type { AgentMessage } from "../../src/agent/types.js";
import { isCluster, type RedisClient } from "../../src/queue/redis/client.js";
import type { SessionStore } from "../../src/queue/store/types.js";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function textOf(m: AgentMessage): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as { type: string; text?: string }[])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("");
}

/** Tags `[m<n>]` in a text, in order. */
export function tagsIn(text: string): number[] {
  return [...text.matchAll(/\[m(\d+)\]/g)].map((m) => Number(m[1]));
}

export interface Audit {
  threads: number;
  sent: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  unanswered: number;
}

/**
 * Reads each thread's session and compares it with what was accepted: every tag must appear in
 * exactly one user message, in increasing order, and the session must end with a finished answer.
 */
export async function auditSessions(store: SessionStore, accepted: Map<string, number[]>): Promise<Audit> {
  const a: Audit = { threads: accepted.size, sent: 0, lost: 0, duplicated: 0, outOfOrder: 0, unanswered: 0 };
  for (const [threadKey, tags] of accepted) {
    a.sent += tags.length;
    const branch = await store.readBranch(threadKey);
    const messages = branch ? buildSessionContext(branch.entries, branch.leafId).messages : [];
    const seen = messages.filter((m) => m.role === "user").flatMap((m) => tagsIn(textOf(m)));
    const counts = new Map<number, number>();
    for (const t of seen) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const t of tags) if (!counts.has(t)) a.lost++;
    for (const c of counts.values()) if (c > 1) a.duplicated += c - 1;
    for (let i = 1; i < seen.length; i++) if ((seen[i] as number) < (seen[i - 1] as number)) a.outOfOrder++;
    const last = messages[messages.length - 1];
    if (last?.role !== "assistant" || last.stopReason !== "stop") a.unanswered++;
  }
  return a;
}

/** Prints one scenario's counts so a CI log shows them whatever the outcome. */
export function report(scenario: string, counts: object): void {
  process.stdout.write(`[fault] ${scenario}: ${JSON.stringify(counts)}\n`);
}

/**
 * Deletes every key under `prefix` (the scenarios share one Redis with other test files); on a
 * cluster, every primary's keys, one DEL per key (a DEL of several keys must stay in one slot).
 */
export async function dropPrefix(redis: RedisClient, prefix: string): Promise<void> {
  const cluster = isCluster(redis);
  for (const node of cluster ? redis.nodes("master") : [redis]) {
    let cursor = "0";
    do {
      const [c, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = c;
      if (keys.length && !cluster) await redis.del(...keys);
      else for (const key of keys) await redis.del(key);
    } while (cursor !== "0");
  }
}

/** Polls `check` every 50 ms until it holds; throws with `what` after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
