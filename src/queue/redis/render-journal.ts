/**
 * The render journal on Redis (see src/queue/state/render-journal.ts): one hash per thread,
 * `{threadKey}:render`, in the thread's hash slot beside its lease, so each write is one script
 * that checks the lease token and writes in the same atomic step (it works on Redis Cluster too).
 * Its scripts (journal-*.lua in src/queue/lua/) are its own, apart from the lease steps, because they
 * change for different reasons.
 */
import { Command } from "ioredis";
import type { RuntimeKeys } from "../../redis-keys.js";
import { luaScript } from "../lua/load.js";
import { groupRecords, type OwedRender, postedField, type RenderJournal } from "../state/render-journal.js";
import type { RedisClient } from "./client.js";
import { runScript, scriptSha } from "./run-script.js";

/** Records what a run owes the chat, fenced by the lease (journal-put.2.lua). */
const JOURNAL_PUT = luaScript("journal-put");
/** Forgets what a run owed and the ids its posts got, fenced by the lease (journal-drop.2.lua). */
const JOURNAL_DROP = luaScript("journal-drop");

/** The SHA1 `EVALSHA` knows `JOURNAL_PUT` by (a posted id is sent with it directly). */
const PUT_SHA = scriptSha(JOURNAL_PUT);

/** The Redis render journal. Uses (does not own) `redis`. */
export class RedisRenderJournal implements RenderJournal {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RuntimeKeys,
  ) {}

  put(threadKey: string, token: string, runId: string, snapshot: unknown): Promise<boolean> {
    return this.write(threadKey, token, runId, JSON.stringify(snapshot));
  }

  /**
   * The same fenced write as `put`, of the field `postedField(runId, key)`, written to the socket
   * before this returns: not through auto-pipelining, which defers a command to the next loop turn
   * (`setImmediate`) and, while an earlier pipeline's round trip is under way, until it ended (126 ms
   * was traced under load: a worker killed then lost the id).
   */
  async posted(threadKey: string, token: string, runId: string, key: string, ref: string): Promise<boolean> {
    const keys = [this.keys.lease(threadKey), this.keys.renderJournal(threadKey)];
    const args = [token, postedField(runId, key), ref];
    const now = new Command("evalsha", [PUT_SHA, keys.length, ...keys, ...args], { replyEncoding: "utf8" });
    this.redis.sendCommand(now);
    try {
      return Number(await now.promise) === 1;
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
      return this.write(threadKey, token, postedField(runId, key), ref);
    }
  }

  private async write(threadKey: string, token: string, field: string, value: string): Promise<boolean> {
    const r = await runScript(
      this.redis,
      JOURNAL_PUT,
      [this.keys.lease(threadKey), this.keys.renderJournal(threadKey)],
      [token, field, value],
    );
    return Number(r) === 1;
  }

  async drop(threadKey: string, token: string, runId: string): Promise<boolean> {
    const r = await runScript(
      this.redis,
      JOURNAL_DROP,
      [this.keys.lease(threadKey), this.keys.renderJournal(threadKey)],
      [token, runId, postedField(runId, "")],
    );
    return Number(r) === 1;
  }

  async owed(threadKey: string): Promise<OwedRender[]> {
    const all = await this.redis.hgetall(this.keys.renderJournal(threadKey));
    return groupRecords(Object.entries(all), (raw) => {
      try {
        return JSON.parse(String(raw)) as unknown;
      } catch {
        // Damaged: nothing to finish from it; listed so that the holder drops it.
        return undefined;
      }
    });
  }
}
