/**
 * Budgets under a race (the concurrency check): 50 threads of one Telegram group (one
 * channel) race against a small channel cap over three `switchboard start --role worker` processes
 * (the production gate and Redis ledger from the config), a gateway-role process here polling the
 * fake Telegram, and the fake LLM answering every call with the same usage at a priced model (each
 * call costs $0.02, its worst case $0.05; the cap is $0.25 a day, so about five calls fit at once).
 * Afterwards, read from the ledger and the sessions: every thread's run ended (answered, or refused
 * with the cap message), total spending is at most the cap plus one call's settled cost, no call
 * was refused while the spending was under the cap (each refusal shows the spending it saw), at
 * least cap / cost calls were answered, and nothing is left reserved.
 *
 * The kill: in a second group, the first call of the race stalls at the fake LLM (reserved, not
 * settled) and its worker is SIGKILLed; its reservation counts until its lease
 * (`budgets.reservationTtlMs`, 10 s here, the minimum) ends, then is gone (reserved back to 0), and
 * the remaining threads are served as above. On one Redis server and on the Redis Cluster.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AssistantMessage } from "../../src/agent/llm/types.js";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { createGateway, type Gateway } from "../../src/gateway/app/index.js";
import { parseConfigText } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { RedisBudgetLedger } from "../../src/queue/budgets/redis-ledger.js";
import type { BudgetCap, CapUsage } from "../../src/queue/budgets/types.js";
import type { RedisClient } from "../../src/queue/redis/client.js";
import { CliProcess } from "../e2e/support/cli-process.js";
import { lastUserText, TG_USERS, World } from "../e2e/support/world.js";
import type { RecordedRequest, ScriptedReply } from "../fakes/llm-server.js";
import type { FakeChat } from "../fakes/telegram/server.js";
import { backendEnv, connectBackend, redisBackends } from "../support/redis.js";
import { dropPrefix, report, waitFor } from "./support.js";

const THREADS = 50;
const WORKERS = 3;
/** $ per call: 10 output tokens at $2000 per million (input is free, so the cost is exact). */
const COST = 0.02;
/** The channel's daily cap. */
const CAP = 0.25;
/** `maxTokens` 25 at $2000 per million: each call reserves $0.05. */
const MAX_TOKENS = 25;
const LEASE_MS = 10_000;
const AUTHOR_PREFIX = /^[\w.-]{1,64}: /;

const BUDGETS = [
  "budgets:",
  "  warnAt: 0",
  `  reservationTtlMs: ${LEASE_MS}`,
  "  approvalTimeoutMs: 0",
  `  channel: { day: { usd: ${CAP} } }`,
].join("\n");

interface Outcome {
  answered: string[];
  refused: { thread: string; text: string }[];
  other: { thread: string; last: string }[];
}

describe.each(redisBackends())("fault: 50 threads of one channel race a budget cap (%s)", (backend) => {
  let w: World;
  let gateway: Gateway | undefined;
  let redis: RedisClient;
  let ledger: RedisBudgetLedger;
  const workers: CliProcess[] = [];
  /** Calls the fake LLM stalls (reserved, never settled) by the text they answer. */
  const stallOn = new Set<string>();
  const stalled: { request: RecordedRequest; at: number }[] = [];
  let chatSeq = 0;

  beforeAll(async () => {
    w = await World.create({ extraYaml: BUDGETS });
    redis = connectBackend(backend);
    ledger = new RedisBudgetLedger(redis, { timeZone: "UTC", prefix: w.prefix });
    w.llm.respondWith("openai-completions", (request): ScriptedReply => {
      const tail = (lastUserText(request).split("\n").at(-1) ?? "").replace(AUTHOR_PREFIX, "");
      const reply: ScriptedReply = {
        text: `alpha answers: ${tail}`,
        usage: { input: 10, output: 10 },
        writeDelayMs: 10,
      };
      for (const marker of stallOn) {
        if (!tail.includes(marker)) continue;
        stallOn.delete(marker);
        stalled.push({ request, at: Date.now() });
        return { ...reply, stallAfterTokens: 1 };
      }
      return reply;
    });
    const base = w
      .yaml({ channels: ["telegram"], logLevel: "info", telegramPollTimeoutSeconds: 1, concurrency: 100 })
      // Where Redis is comes from the environment (REDIS_URL or REDIS_CLUSTER: backendEnv).
      .replace(/^ {2}redisUrl: .*\n/m, "")
      .replace(
        "      name: Alpha One\n",
        [
          "      name: Alpha One",
          `      maxTokens: ${MAX_TOKENS}`,
          "      cost: { input: 0, output: 2000, cacheRead: 0, cacheWrite: 0 }",
          "      headers: { X-Worker: WORKER }",
          "",
        ].join("\n"),
      );
    if (!base.includes("X-Worker")) throw new Error("could not price the fake model");
    const env = { ...w.env(), ...backendEnv(backend) };
    for (let i = 0; i < WORKERS; i++) {
      const file = join(w.dir, `worker-${i}.yaml`);
      writeFileSync(file, base.replace("X-Worker: WORKER", `X-Worker: w${i}`));
      workers.push(new CliProcess(["start", "--role", "worker", "--config", file], { cwd: w.dir, env }));
    }
    const parsed = parseConfigText(base, { env, baseDir: w.dir, fileName: "gateway.yaml" });
    if (!parsed.ok) throw new Error(`config invalid: ${JSON.stringify(parsed.issues)}`);
    gateway = await createGateway({ config: parsed.config, role: "gateway", logger: silentProcessLogger() });
    w.gateways.push(gateway);
    await gateway.start();
    await Promise.all(workers.map((p) => p.waitForLog("switchboard started", {}, 60_000)));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(workers.map((p) => p.kill("SIGKILL")));
    await w?.close();
    if (redis) {
      await dropPrefix(redis, w.prefix);
      await dropPrefix(redis, `{${w.prefix}`);
      await redis.quit();
    }
  });

  /** A fresh group (a fresh channel cap): its id and cap. */
  function newChannel(): { chat: FakeChat; cap: BudgetCap } {
    const chat: FakeChat = { id: -100700000 - ++chatSeq, type: "supergroup", title: `Race ${chatSeq}` };
    return { chat, cap: { scope: "channel", key: `telegram:${chat.id}`, period: "day", usd: CAP } };
  }

  async function usage(cap: BudgetCap): Promise<CapUsage> {
    const [u] = await ledger.usage([cap], Date.now());
    if (!u) throw new Error("no usage for the cap");
    return u;
  }

  /** 50 mentions at once, each its own thread of the group. */
  function race(chat: FakeChat, label: string): string[] {
    const texts = Array.from({ length: THREADS }, (_, i) => `${label}-${i}`);
    for (const text of texts) w.telegram.userMessage({ chat, from: TG_USERS.alice, text, mention: true });
    return texts;
  }

  /**
   * Each thread's last assistant message, once all `count` threads of `chat` end with one and have
   * nothing queued: the run's outcome. (Not waiting for the chat: a group's posts go at Telegram's
   * pace, 20 a minute, so 50 answers take over two minutes to show; the budget decided before.)
   */
  async function outcomes(chat: FakeChat, count: number, ms: number): Promise<Outcome> {
    const store = (gateway as Gateway).store;
    const runtime = (gateway as Gateway).runtime;
    let last = new Map<string, AssistantMessage | undefined>();
    let pending = "no thread yet";
    await waitFor(
      async () => {
        const threads = (await store.listThreads({ limit: 1000 })).filter((t) =>
          t.threadKey.startsWith(`telegram:${chat.id}:`),
        );
        if (threads.length < count) {
          pending = `${threads.length} threads`;
          return false;
        }
        const now = new Map<string, AssistantMessage | undefined>();
        for (const t of threads) {
          const s = await runtime.status(t.threadKey);
          const branch = await store.readBranch(t.threadKey);
          const messages = branch ? buildSessionContext(branch.entries, branch.leafId).messages : [];
          const m = messages.at(-1);
          if (s.inboxDepth > 0 || m?.role !== "assistant") {
            pending = `${t.threadKey}: ${JSON.stringify(s)}, last ${JSON.stringify(m).slice(0, 600)}`;
            return false;
          }
          now.set(t.threadKey, m);
        }
        last = now;
        return true;
      },
      ms,
      `all ${count} threads of the group to end`,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message} (still: ${pending})`);
    });
    const out: Outcome = { answered: [], refused: [], other: [] };
    for (const [thread, m] of last) {
      const text = m?.content.map((c) => (c.type === "text" ? c.text : "")).join("") ?? "";
      if (m?.stopReason === "stop" && text.startsWith("alpha answers:")) out.answered.push(thread);
      else if (m?.stopReason === "error" && m.errorMessage?.startsWith("💸 Not run:"))
        out.refused.push({ thread, text: m.errorMessage });
      else out.other.push({ thread, last: JSON.stringify(m).slice(0, 300) });
    }
    return out;
  }

  /** The spending a refusal saw (`$0.26 of $0.25`), as [spent, limit]. */
  function seenAtRefusal(text: string): [number, number] {
    const m = /\(\$(\d+\.\d+) of \$(\d+\.\d+)\)/.exec(text);
    if (!m) throw new Error(`a refusal without the spending: ${text}`);
    return [Number(m[1]), Number(m[2])];
  }

  /** The assertions both scenarios share. */
  function checkRace(o: Outcome, end: CapUsage): void {
    // Every thread ended: answered or refused with the cap message; none lost.
    expect(o.other).toEqual([]);
    expect(o.answered.length + o.refused.length).toBe(THREADS);
    // Spending passes the cap by at most one call's settled cost (rounded to micro-dollars).
    expect(end.spent.usd).toBeLessThanOrEqual(CAP + COST + 1e-9);
    expect(end.spent.usd).toBeCloseTo(o.answered.length * COST, 6);
    // No call refused while under the cap: each refusal saw the spending at the cap, and so ends it.
    for (const r of o.refused) {
      const [spent, limit] = seenAtRefusal(r.text);
      expect(limit).toBe(CAP);
      expect(spent, r.text).toBeGreaterThanOrEqual(CAP);
    }
    if (o.refused.length > 0) expect(end.spent.usd).toBeGreaterThanOrEqual(CAP);
    expect(o.answered.length).toBeGreaterThanOrEqual(Math.ceil(CAP / COST));
    // Nothing left reserved.
    expect(end.reserved.usd).toBe(0);
  }

  it("answers until the cap, refuses only at it, passes it by one call at most", async () => {
    const t0 = Date.now();
    const { chat, cap } = newChannel();
    race(chat, "race");
    // The highest spent + reserved seen while the race runs (reservations hold the cap's room).
    let peak = 0;
    const watching = setInterval(() => {
      usage(cap).then(
        (u) => {
          peak = Math.max(peak, u.spent.usd + u.reserved.usd);
        },
        () => {},
      );
    }, 50);
    const o = await outcomes(chat, THREADS, 45_000);
    clearInterval(watching);
    const end = await usage(cap);
    report(`50 threads race a $${CAP} channel cap over ${WORKERS} workers (${backend})`, {
      answered: o.answered.length,
      refused: o.refused.length,
      spent: end.spent.usd,
      reserved: end.reserved.usd,
      cap: CAP,
      costPerCall: COST,
      peakSpentPlusReserved: Number(peak.toFixed(6)),
      modelCalls: w.requests("openai-completions").length,
      seconds: Number(((Date.now() - t0) / 1000).toFixed(1)),
    });
    checkRace(o, end);
  }, 60_000);

  it("a worker SIGKILLed mid-call leaves its reservation until the lease ends; the rest are served", async () => {
    const t0 = Date.now();
    const { chat, cap } = newChannel();
    stallOn.add("kill-0");
    const before = stalled.length;
    race(chat, "kill");
    // The first thread's call reaches the model (reserved, not settled) and stalls there.
    await waitFor(() => stalled.length > before, 20_000, "the stalled call to reach the model");
    const held = stalled[before] as { request: RecordedRequest; at: number };
    const victimName = held.request.headers["x-worker"];
    const victim = workers[Number(victimName?.slice(1))];
    if (!victim) throw new Error(`the stalled call came from no known worker (${victimName})`);
    const reservedAtKill = (await usage(cap)).reserved.usd;
    await victim.kill("SIGKILL");
    const killedAt = Date.now();
    // The dead call's reservation counts until its lease ends, then it is gone: reserved is 0 no
    // sooner than the lease after the call was reserved (before the model got it).
    let zeroAt = 0;
    await waitFor(
      async () => {
        if ((await usage(cap)).reserved.usd !== 0) return false;
        zeroAt = Date.now();
        return true;
      },
      LEASE_MS + 15_000,
      "the dead call's reservation to end",
    );
    const o = await outcomes(chat, THREADS, 40_000);
    const end = await usage(cap);
    const served = o.answered.length + o.refused.length;
    report(`worker SIGKILLed mid-call in the race (${backend})`, {
      victim: victimName,
      reservedAtKill,
      reservedGoneAfterMs: zeroAt - held.at,
      leaseMs: LEASE_MS,
      answered: o.answered.length,
      refused: o.refused.length,
      spent: end.spent.usd,
      reserved: end.reserved.usd,
      cap: CAP,
      seconds: Number(((Date.now() - t0) / 1000).toFixed(1)),
    });
    expect(reservedAtKill).toBeGreaterThanOrEqual(0.05);
    expect(killedAt).toBeLessThan(held.at + LEASE_MS);
    // Reserved before the model got the call, so its lease ends at most LEASE_MS after that.
    expect(zeroAt - held.at).toBeGreaterThanOrEqual(LEASE_MS - 2000);
    expect(served).toBe(THREADS);
    checkRace(o, end);
  }, 70_000);
});
