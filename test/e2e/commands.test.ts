/**
 * Chat commands end to end on Telegram, Slack and Discord, through their fakes, the Redis runtime
 * and the fake LLM server: `/model` switches a thread mid-conversation to another provider and the
 * next request carries the history; `/thinking` is clamped to the model and says so; `/stop` ends a
 * running `bash sleep` within a second; `/new` starts a fresh session, keeps the old one and says so
 * once; `/status` names the thread key and where its session is stored.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { conversation, type PlatformName, waitForBot } from "./support/drivers.js";
import { lastUserText, until, World } from "./support/world.js";

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create();
  app = await world.start("all");
  world.slack.eventsUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await world?.close();
});

/** The thread whose stored session mentions `text`. */
async function threadWith(text: string): Promise<string> {
  return until(async () => {
    for (const t of await app.store.listThreads({ limit: 100 })) {
      const branch = await app.store.readBranch(t.threadKey);
      if (JSON.stringify(branch?.entries ?? []).includes(text)) return t.threadKey;
    }
    return undefined;
  }, `the thread that holds "${text}"`);
}

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const seenPidFiles = new Set<string>();

/**
 * The host pid of the `sleep` whose pid, as its shell saw it, is `pid`. In the tool sandbox that is
 * a pid of the sandbox's own namespace: find the sleep whose NSpid line ends with it (the newest,
 * should several sandboxes have one).
 */
function hostPid(pid: number): number | undefined {
  let best: { pid: number; start: number } | undefined;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (!/^Name:\s+sleep$/m.test(status)) continue;
      const ns = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [Number(entry)];
      if (ns.at(-1) !== pid) continue;
      const start = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ")[19]);
      if (!best || start > best.start) best = { pid: Number(entry), start };
    } catch {
      // gone meanwhile
    }
  }
  return best?.pid;
}

/** The pid a new `[sleep]` run wrote into its thread's workspace (each thread has its own). */
function sleepPid(): number | undefined {
  const root = join(world.dir, "workspaces");
  if (!existsSync(root)) return undefined;
  for (const dir of readdirSync(root)) {
    const file = join(root, dir, "sleep.pid");
    if (!seenPidFiles.has(file) && existsSync(file)) {
      const text = readFileSync(file, "utf8");
      if (!/^\d+\n/.test(text)) continue;
      const pid = hostPid(Number(text.trim()));
      if (pid === undefined) continue;
      seenPidFiles.add(file);
      return pid;
    }
  }
  return undefined;
}

const platforms: PlatformName[] = ["telegram", "slack", "discord"];

describe.each(platforms)("commands on %s", (platform) => {
  it("/model switches mid-thread to another provider; /thinking xhigh is clamped and said", async () => {
    const c = conversation(world, platform);
    const tag = `${platform}-model`;
    await c.start(`first question ${tag}`);
    await waitForBot(c, (m) => m.text === `alpha answers: first question ${tag}`, "alpha's answer");

    await c.command("model", "beta/two");
    await waitForBot(
      c,
      (m) => m.text.includes("Model set to beta/two (Beta Two) for this thread."),
      "the /model reply",
    );
    await c.command("thinking", "xhigh");
    await waitForBot(
      c,
      (m) =>
        m.text.includes(
          "Beta Two does not support thinking level xhigh; set to high instead for this thread.",
        ),
      "the /thinking reply",
    );

    const before = world.requests("anthropic-messages").length;
    await c.say(`second question ${tag}`);
    await waitForBot(c, (m) => m.text === `beta answers: second question ${tag}`, "beta's answer");
    const request = world
      .requests("anthropic-messages")
      .slice(before)
      .find((r) => lastUserText(r).includes(`second question ${tag}`));
    const history = JSON.stringify(request?.body.messages);
    expect(history).toContain(`first question ${tag}`);
    expect(history).toContain(`alpha answers: first question ${tag}`);
    expect(request?.body.model).toBe("two");
    expect(request?.body.thinking).toMatchObject({ type: "enabled" });
  });

  it("/stop during a running bash sleep kills it at once, long before it would end", async () => {
    const c = conversation(world, platform);
    await c.start("[sleep] wait for something");
    const pid = await until(() => sleepPid(), "the sleep to start");
    expect(alive(pid)).toBe(true);
    const stoppedAt = Date.now();
    await c.command("stop");
    // The sleep runs 30 s; the bound leaves room for a loaded 2-core machine (typically ≈ 100 ms).
    await until(() => !alive(pid), "the sleep to be killed", 5000);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    await waitForBot(c, (m) => m.text.includes("Stopped."), "the /stop reply");
  });

  it("/new starts a fresh session and keeps the old one", async () => {
    const c = conversation(world, platform);
    const tag = `${platform}-new`;
    await c.start(`remember ${tag}`);
    await waitForBot(c, (m) => m.text === `alpha answers: remember ${tag}`, "the first answer");
    const threadKey = await threadWith(`remember ${tag}`);
    await c.command("new");
    await waitForBot(c, (m) => m.text.startsWith("Started a new session ("), "the confirmation of /new");
    await until(async () => (await app.store.listSessions(threadKey)).length === 2, "a second session");
    const before = world.requests("openai-completions").length;
    await c.say(`fresh start ${tag}`);
    await waitForBot(
      c,
      (m) => m.text === `alpha answers: fresh start ${tag}`,
      "the answer in the new session",
    );
    const request = world
      .requests("openai-completions")
      .slice(before)
      .find((r) => lastUserText(r).includes(`fresh start ${tag}`));
    expect(JSON.stringify(request?.body.messages)).not.toContain(`remember ${tag}`);
    const sessions = await app.store.listSessions(threadKey);
    const old = await app.store.exportJsonl(threadKey, sessions[0]?.header.id ?? "");
    expect(old).toContain(`remember ${tag}`);
    // One confirmation for one command.
    expect(c.botMessages().filter((m) => /new session/i.test(m.text))).toHaveLength(1);
  });

  it("/compact is queued and the thread hears what it did; /status shows the thread's model and mode", async () => {
    const c = conversation(world, platform);
    const tag = `${platform}-compact`;
    await c.start(`a long story ${tag}`);
    await waitForBot(c, (m) => m.text === `alpha answers: a long story ${tag}`, "the first answer");
    await c.command("compact", "keep the names");
    await waitForBot(c, (m) => m.text.includes("Compacting the conversation"), "the /compact reply");
    await waitForBot(
      c,
      (m) => /Compacted the conversation|Nothing compacted: there is not enough history/.test(m.text),
      "the runtime's notice about the compaction",
    );
    await c.command("status");
    const status = await waitForBot(c, (m) => m.text.includes("Model:"), "the /status reply");
    expect(status.text).toContain("alpha/one");
    expect(status.text).toContain("steer");
    // The thread key `switchboard export` takes, and where the session is stored.
    const threadKey = await threadWith(`a long story ${tag}`);
    const sessionId = (await app.store.getThreadMeta(threadKey))?.currentSessionId ?? "";
    expect(status.text).toContain(`Thread: ${threadKey}`);
    expect(status.text).toContain(
      `Session: ${sessionId} (Redis key ${world.prefix}{${threadKey}}:s:${sessionId})`,
    );
  });
});
