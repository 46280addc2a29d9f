/**
 * The render journal on Redis (see src/queue/state/render-journal.ts): one hash per thread,
 * `{threadKey}:render`, in the thread's hash slot beside its lease, so each write is one script
 * that checks the lease token and writes in the same atomic step (it works on Redis Cluster too).
 * Its scripts live here, apart from the lease steps, because they change for different reasons.
 */
import { createHash } from "node:crypto";
import { Command } from "ioredis";
import type { RuntimeKeys } from "../../redis-keys.js";
import { groupRecords, type OwedRender, postedField, type RenderJournal } from "../state/render-journal.js";
import type { RedisClient } from "./client.js";
import type { LuaScript } from "./run-script.js";
import { runScript } from "./run-script.js";

const JOURNAL_PUT: LuaScript = {
  numberOfKeys: 2,
  lua: `--[[
  Records what a run owes the chat, fenced by the lease.
  KEYS[1] lease (string)   KEYS[2] render journal (hash)
  ARGV[1] token  ARGV[2] run id (or a posted id's field: run id, newline, key)
  ARGV[3] the snapshot (JSON) (or the posted id)
  Returns 1 written; 0 the token does not hold the lease (nothing written)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
`,
};

const JOURNAL_DROP: LuaScript = {
  numberOfKeys: 2,
  lua: `--[[
  Forgets what a run owed (the chat shows its final state) and the ids its posts got, fenced by the
  lease. The hash holds one thread's few records, so listing its fields is cheap.
  KEYS[1] lease (string)   KEYS[2] render journal (hash)
  ARGV[1] token  ARGV[2] run id  ARGV[3] the prefix of its posted ids' fields (run id and a newline)
  Returns 1 done; 0 the token does not hold the lease (nothing changed)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[2])
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(field, 1, #ARGV[3]) == ARGV[3] then redis.call('HDEL', KEYS[2], field) end
end
return 1
`,
};

/** The SHA1 `EVALSHA` knows `JOURNAL_PUT` by (a posted id is sent with it directly). */
const PUT_SHA = createHash("sha1").update(JOURNAL_PUT.lua).digest("hex");

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
