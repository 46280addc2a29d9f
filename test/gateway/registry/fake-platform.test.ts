/**
 * A platform is its folder plus one registry line. This test adds one that exists only here
 * (./fake-platform/: an adapter and its channel definition) with one line, and takes a message
 * through the gateway to it: the config accepts `channels.fake` (its secret from the environment),
 * the gateway builds the adapter and mounts its webhook route and page, the model's answer is posted
 * back through it, and `switchboard check` runs its credential check. Nothing under src/ names it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registered } from "../../../src/adapters/channel.js";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../../src/adapters/registry.js";
import { createCliHandlers } from "../../../src/gateway/app/cli-handlers.js";
import { createGateway, type Gateway } from "../../../src/gateway/app/index.js";
import { runCheck } from "../../../src/gateway/cli/check.js";
import { parseConfigText } from "../../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../../src/gateway/log.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../fakes/llm-server.js";
import { builtFakes, fakeChannel } from "./fake-platform/channel.js";

// The registry line.
const channels: ChannelRegistry = { ...BUILT_IN_CHANNELS, fake: registered(fakeChannel) };

let dir: string;
let llm: FakeLlmServer;
let gateway: Gateway | undefined;

const yaml = () =>
  [
    "channels:",
    "  fake:",
    '    admins: ["U1"]',
    "models:",
    "  default: alpha/one",
    "  custom:",
    "    - provider: alpha",
    "      id: one",
    "      name: Alpha One",
    "      api: openai-completions",
    `      baseUrl: ${llm.baseUrl("openai-completions")}`,
    "runtime:",
    `  dataDir: ${join(dir, "data")}`,
    "agent:",
    `  workspaceDir: ${join(dir, "workspace")}`,
    "tools:",
    "  sandbox:",
    "    mode: none",
    "http:",
    "  port: 0",
  ].join("\n");

const load = (env: Record<string, string>) =>
  parseConfigText(yaml(), { env, baseDir: dir, fileName: "fake.yaml", channels });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sb-fake-platform-"));
  llm = await startFakeLlmServer();
  llm.respondWith("openai-completions", () => ({ text: "hello from the model" }));
});
afterAll(async () => {
  await gateway?.stop();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a platform registered with one line", () => {
  it("has a config section: its secret comes from its variable and turns it on; others stay off", () => {
    const off = load({});
    expect(off.ok && off.config.channels).toMatchObject({ fake: { enabled: false }, web: { enabled: true } });
    const on = load({ FAKE_TOKEN: "fake-good-token" });
    if (!on.ok) throw new Error(JSON.stringify(on.issues));
    const c = on.config.channels as unknown as Record<
      string,
      { enabled: boolean; token?: string; path?: string }
    >;
    expect(c.fake).toMatchObject({ enabled: true, token: "fake-good-token", path: "/fake/inbound" });
    expect(c.web?.enabled).toBe(false);
    const typo = parseConfigText(`${yaml()}\n`.replace("  fake:\n", "  fake:\n    pathh: /x\n"), {
      env: { FAKE_TOKEN: "fake-good-token" },
      baseDir: dir,
      channels,
    });
    expect(typo.ok).toBe(false);
    if (!typo.ok) expect(typo.issues.map((i) => i.path)).toContain("channels.fake.pathh");
  });

  it("takes a message through the gateway: webhook route mounted, answer posted through the adapter", async () => {
    const loaded = load({ FAKE_TOKEN: "fake-good-token" });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
    gateway = await createGateway({
      config: loaded.config,
      role: "all",
      logger: silentProcessLogger(),
      channels,
    });
    await gateway.start();
    const adapter = builtFakes.at(-1);
    if (!adapter) throw new Error("the gateway built no fake adapter");

    const send = (token: string) =>
      fetch(`${gateway?.url}/fake/inbound`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-fake-token": token },
        body: JSON.stringify({ id: "m1", user: "U1", text: "hi there" }),
      });
    expect((await send("wrong")).status).toBe(401);
    expect((await send("fake-good-token")).status).toBe(200);
    const end = Date.now() + 10_000;
    while (!adapter.posted.get("fake:U1")?.includes("hello from the model")) {
      if (Date.now() > end) throw new Error(`no answer; posted: ${JSON.stringify([...adapter.posted])}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(adapter.posted.get("fake:U1")).toEqual(["hello from the model"]);
    // Its page is mounted like the web chat's, from the adapter's `mounts()`.
    const page = await fetch(`${gateway.url}/fake/page`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe("the fake platform's page");
  });

  it("is checked by switchboard check through its adapter's probe", async () => {
    const run = async (token: string) => {
      const loaded = load({ FAKE_TOKEN: token });
      const out: string[] = [];
      const code = await runCheck({ offline: false, role: "all" }, loaded, {
        handlers: createCliHandlers({ channels }),
        io: { stdout: (t) => out.push(t), stderr: (t) => out.push(t) },
        env: {},
        createLogger: () => silentProcessLogger(),
      });
      return { code, out: out.join(""), adapter: builtFakes.at(-1) };
    };
    const good = await run("fake-good-token");
    expect(good.out).toContain("✓ fake: bot @fakebot");
    expect(good.adapter?.probes).toBe(1);
    const bad = await run("fake-bad-token");
    expect(bad.out).toContain("✗ fake: the token was refused; set FAKE_TOKEN");
    expect(bad.code).toBe(2);
  });
});
