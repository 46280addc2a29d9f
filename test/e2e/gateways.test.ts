/**
 * Several gateways: two `--role gateway` processes and three `--role worker` processes, each a
 * `switchboard start` child process, on the Redis Cluster (on the single server with
 * SB_TEST_REDIS=redis). Telegram long polling is held by one gateway at a time through a Redis
 * lease; the gateway that holds it is SIGKILLed, and the other takes over within the lease time
 * (5 s, plus its 1 s retry). Every message, before and after the crash, is answered exactly once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeChat } from "../fakes/telegram/server.js";
import { backendEnv, type RedisBackend, redisBackends } from "../support/redis.js";
import { CliProcess } from "./support/cli-process.js";
import { TG_USERS, until, World } from "./support/world.js";

const backend: RedisBackend = redisBackends().includes("cluster") ? "cluster" : "redis";
const LEASE_MS = 5000;

let world: World;
const running: CliProcess[] = [];
beforeAll(async () => {
  world = await World.create();
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.kill("SIGKILL")));
  await world?.close();
});

/** A config file whose Telegram client names itself `name` to the fake (so the test sees who polls). */
function config(name: string): string {
  let text = world.yaml({ channels: ["telegram"], logLevel: "info", telegramPollTimeoutSeconds: 1 });
  text = text.replace(`apiRoot: ${world.telegram.apiRoot()}`, `apiRoot: ${world.telegram.apiRoot(name)}`);
  // The Redis of this run: the config names none, the environment does (REDIS_URL or REDIS_CLUSTER).
  text = text.replace(/^ {2}redisUrl: .*\n/m, "");
  const path = join(world.dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

function launch(role: "gateway" | "worker", name: string): CliProcess {
  const p = new CliProcess(["start", "--role", role, "--config", config(name)], {
    cwd: world.dir,
    env: { ...world.env(), ...backendEnv(backend) },
  });
  running.push(p);
  return p;
}

/** Names of the gateways whose getUpdates calls the fake answered, in order. */
const pollers = (since = 0) =>
  world.telegram.calls.filter((c) => c.method === "getUpdates" && c.at >= since).map((c) => c.prefix);

describe(`two gateways and three workers (${backend})`, () => {
  it("checks the Redis it is given, and that it has the replicas inbox appends wait for", async () => {
    const check = (file: string) =>
      new CliProcess(["check", "--config", file], {
        cwd: world.dir,
        env: { ...world.env(), ...backendEnv(backend) },
      });
    const healthy = check(config("check"));
    expect(await healthy.exited).toBe(0);
    expect(healthy.lines.join("\n")).toMatch(
      backend === "cluster" ? /✓ redis: cluster_state ok, 3 primaries/ : /✓ redis: PONG/,
    );
    // One replica per primary on the test cluster, none on the single server: one more than there is.
    const wanted = backend === "cluster" ? 2 : 1;
    const file = config("check-replicas");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace("runtime:\n", `runtime:\n  waitReplicas: ${wanted}\n`),
    );
    const short = check(file);
    expect(await short.exited).not.toBe(0);
    expect(short.lines.join("\n")).toContain(
      backend === "cluster"
        ? "✗ redis: runtime.waitReplicas is 2 but 3 of 3 primaries have fewer connected replicas: deliveries to their threads would be refused"
        : "✗ redis: runtime.waitReplicas is 1 but the server has 0 connected replicas: deliveries to their threads would be refused",
    );
  });

  it("SIGKILL the gateway that polls Telegram: the other takes over within the lease time; nothing is lost or answered twice", async () => {
    const chat: FakeChat = { id: -100770001, type: "supergroup", title: "Gateways" };
    const gateways = new Map([
      ["gw-a", launch("gateway", "gw-a")],
      ["gw-b", launch("gateway", "gw-b")],
    ]);
    const workers = ["w-1", "w-2", "w-3"].map((name) => launch("worker", name));
    await Promise.all([...gateways.values(), ...workers].map((p) => p.waitForLog("switchboard started")));
    const holder = await until(() => pollers().at(-1), "a gateway polling Telegram");
    const standby = holder === "gw-a" ? "gw-b" : "gw-a";
    expect(pollers()).not.toContain(standby);

    // Each top-level mention starts a thread of its own, so each gets one answer.
    const ask = (text: string) =>
      world.telegram.userMessage({ chat, from: TG_USERS.alice, text, mention: true });
    const answers = (text: string) =>
      world.telegram.botMessages(chat.id).filter((m) => m.text === `alpha answers: ${text}`).length;
    const before = Array.from({ length: 5 }, (_, i) => `before ${i}`);
    for (const text of before) ask(text);
    await until(() => before.every((t) => answers(t) === 1), "the answers before the crash", 30_000);

    const killedAt = Date.now(); // the fake's clock
    await gateways.get(holder as string)?.kill("SIGKILL");
    const after = Array.from({ length: 5 }, (_, i) => `after ${i}`);
    for (const text of after) ask(text);
    await until(() => pollers(killedAt).includes(standby), `${standby} taking over the poll`, 20_000);
    const takeoverMs =
      (world.telegram.calls.find((c) => c.at >= killedAt && c.prefix === standby)?.at ?? 0) - killedAt;
    process.stdout.write(
      `[gateways] ${standby} took over the Telegram poll ${takeoverMs} ms after ${holder} died\n`,
    );
    // The lease expires on Redis's clock LEASE_MS after the last renewal; the standby tries every
    // LEASE_MS / 5. Its first poll comes after that, so within the lease time plus one retry (and
    // whatever a loaded machine adds).
    expect(takeoverMs).toBeLessThan(2 * LEASE_MS);

    await until(() => after.every((t) => answers(t) >= 1), "the answers after the takeover", 30_000);
    for (const text of [...before, ...after]) expect(answers(text), text).toBe(1);
    expect(pollers(killedAt).filter((p) => p === holder)).toEqual([]);
  });
});
