/**
 * The web chat holds on its own, without a sandbox: a local process that runs beside the gateway
 * with its environment (what a background job started by the agent's bash would have) gathers every
 * secret it can read (its environment, the gateway's `/proc/<pid>/environ` and command line, every
 * file under the data and workspace folders) and tries each against the web chat on loopback: as a
 * sign-in token, a bearer token, a session cookie, a CSRF token. It can neither approve the pending
 * approval request (✅) nor post as the user, with or without `SWITCHBOARD_HTTP_TOKEN` set; the
 * person at the page then approves it. The sign-in link, the session cookie and the CSRF token
 * appear in no process environment and no file of the deployment.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebClient } from "../adapters/web/client.js";
import { CliProcess } from "./support/cli-process.js";
import { until, World } from "./support/world.js";

const run = promisify(execFile);

/** The local process: reads what it can, then tries it all. Prints its findings as JSON. */
const ATTACKER = String.raw`
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
const [port, conversation, message, canary, ...dirs] = process.argv.slice(2);
const found = new Set();
const take = (text) => { for (const m of String(text).match(/[A-Za-z0-9_.=-]{16,}/g) ?? []) found.add(m.replace(/^[^=]*=/, "")); };
for (const v of Object.values(process.env)) take(v);
for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
  try {
    const env = readFileSync("/proc/" + pid + "/environ", "utf8");
    if (!env.includes(canary)) continue;
    for (const kv of env.split("\0")) take(kv);
    take(readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\0").join(" "));
  } catch {}
}
const walk = (d) => { for (const n of readdirSync(d)) { const p = join(d, n); try { if (statSync(p).isDirectory()) walk(p); else take(readFileSync(p, "utf8")); } catch {} } };
for (const d of dirs) { try { walk(d); } catch {} }
const base = "http://127.0.0.1:" + port;
const statuses = { signIn: {}, approve: {}, post: {}, read: {} };
const count = (kind, s) => { statuses[kind][s] = (statuses[kind][s] ?? 0) + 1; };
const json = (extra) => ({ "content-type": "application/json", origin: base, ...extra });
for (const c of found) {
  count("signIn", (await fetch(base + "/?token=" + encodeURIComponent(c), { redirect: "manual" })).status);
  for (const h of [{ authorization: "Bearer " + c }, { cookie: "sb_web_" + port + "=" + c }, { cookie: "sb_token=" + c }]) {
    const headers = json({ ...h, "x-csrf-token": c });
    count("approve", (await fetch(base + "/api/conversations/" + conversation + "/messages/" + message + "/reactions", { method: "POST", headers, body: JSON.stringify({ emoji: "✅" }) })).status);
    count("post", (await fetch(base + "/api/conversations/" + conversation + "/messages", { method: "POST", headers, body: JSON.stringify({ text: "/approve" }) })).status);
    count("read", (await fetch(base + "/api/conversations/" + conversation + "/messages", { headers: h })).status);
  }
}
console.log(JSON.stringify({ candidates: [...found], statuses }));
`;

interface Message {
  id: string;
  text: string;
  from: { isBot: boolean };
  reactions: { emoji: string; bot: boolean; users: string[] }[];
}

let world: World;
const running = new Set<CliProcess>();

beforeAll(async () => {
  world = await World.create({ redis: false });
});
afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop()));
  await world?.close();
});

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(readFileSync(path, "utf8"));
  }
  return out;
}

/** The environments and command lines of the processes started with `canary` in their environment. */
function processTexts(canary: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8");
      if (env.includes(canary)) out.push(env, readFileSync(`/proc/${pid}/cmdline`, "utf8"));
    } catch {
      // a process that ended meanwhile
    }
  }
  return out;
}

describe.each([
  ["with SWITCHBOARD_HTTP_TOKEN set", true],
  ["without an HTTP token", false],
])("a local process against the web chat (no sandbox), %s", (_name, withToken) => {
  it("cannot approve or post as the user; the person at the page can", async () => {
    const canary = `canary-${randomBytes(8).toString("hex")}`;
    const env = {
      ...world.env(),
      SB_CANARY: canary,
      ...(withToken ? { SWITCHBOARD_HTTP_TOKEN: `http-token-${randomBytes(16).toString("hex")}` } : {}),
    };
    const file = join(world.dir, `local-${withToken}.yaml`);
    writeFileSync(file, world.yaml({ channels: [], web: true, logLevel: "info" }));
    const gateway = new CliProcess(["start", "--config", file], { cwd: world.dir, env });
    running.add(gateway);
    const [, link, port] = await gateway.waitForLine(
      /^Web chat: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=\S+)$/,
    );
    const client = await WebClient.open(link as string);
    const { conversation } = await client.call<{ conversation: { id: string } }>(
      "POST",
      "api/conversations",
      {},
    );
    await client.call("POST", `api/conversations/${conversation.id}/messages`, {
      text: "[rm] tidy the workspace",
    });
    const messages = async () =>
      (await client.call<{ messages: Message[] }>("GET", `api/conversations/${conversation.id}/messages`))
        .messages;
    const request = await until(
      async () =>
        (await messages()).find(
          (m) => m.text.includes("Approval needed") && m.reactions.some((r) => r.bot && r.emoji === "♾️"),
        ),
      "the approval request with its buttons",
      20_000,
    );

    const script = join(world.dir, "attacker.mjs");
    writeFileSync(script, ATTACKER);
    const { stdout } = await run(
      process.execPath,
      [
        script,
        port as string,
        conversation.id,
        request.id,
        canary,
        join(world.dir, "data"),
        join(world.dir, "workspaces"),
      ],
      { env, cwd: join(world.dir), maxBuffer: 1 << 20 },
    );
    const report = JSON.parse(stdout) as {
      candidates: string[];
      statuses: Record<string, Record<string, number>>;
    };
    console.log(
      `local process ${withToken ? "with" : "without"} the HTTP token: ${report.candidates.length} secrets tried,`,
      JSON.stringify(report.statuses),
    );
    // It did get hold of what the gateway's environment holds, the HTTP token included.
    expect(report.candidates).toContain(canary);
    if (withToken) expect(report.candidates).toContain(env.SWITCHBOARD_HTTP_TOKEN);
    for (const [kind, counts] of Object.entries(report.statuses))
      expect([kind, Object.keys(counts).filter((s) => s !== "401" && s !== "403")]).toEqual([kind, []]);

    // Nothing changed: the request waits, no message was posted as the user.
    const after = await messages();
    expect(after.filter((m) => !m.from.isBot).map((m) => m.text)).toEqual(["[rm] tidy the workspace"]);
    expect(after.find((m) => m.id === request.id)?.reactions.find((r) => r.emoji === "✅")?.users).toEqual(
      [],
    );
    expect(after.some((m) => m.text.includes("saw the tool result"))).toBe(false);

    // The secrets of the page are nowhere a process on the machine could read them.
    const secrets = [
      new URL(link as string).searchParams.get("token") as string,
      client.cookie.split("=")[1] as string,
      client.csrf,
    ];
    const readable = [...processTexts(canary), ...filesUnder(world.dir)].join("\n");
    for (const secret of secrets)
      expect(readable.includes(secret), "a page secret in an environment or a file").toBe(false);

    // The person at the page approves; the call runs.
    await client.call("POST", `api/conversations/${conversation.id}/messages/${request.id}/reactions`, {
      emoji: "✅",
    });
    await until(
      async () =>
        (await messages()).some((m) => m.text.includes("saw the tool result") && m.text.includes("removed")),
      "the answer after the approved call",
      20_000,
    );
    running.delete(gateway);
    expect(await gateway.stop()).toBe(0);
  }, 180_000);
});
