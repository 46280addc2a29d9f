/**
 * Claims the docs make about behaviour, each read from the doc (so rewording it means looking here)
 * and checked against the code that has to make it true. The example config's "every setting" is
 * checked in example-config.test.ts, config values named in the docs in snippets.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SlackAdapter } from "../../src/adapters/slack/adapter.js";
import { WebChatAdapter } from "../../src/adapters/web/index.js";
import { resetRegisteredModels } from "../../src/agent/llm/models.js";
import { acknowledgeDelivery } from "../../src/gateway/app/acknowledge.js";
import { createCliHandlers } from "../../src/gateway/app/index.js";
import {
  chooseDefaultModel,
  modelIssues,
  modelRefOf,
  registerConfiguredModels,
} from "../../src/gateway/app/models.js";
import { runCli } from "../../src/gateway/cli/index.js";
import { ConfigSchema, parseConfigText } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { holdLease } from "../../src/queue/lease/hold.js";
import { RecordingAdapter } from "../adapters/support/recording-adapter.js";
import { WebClient } from "../adapters/web/client.js";
import { serveWebChat } from "../adapters/web/harness.js";
import { until, World } from "../e2e/support/world.js";
import { ManualClock } from "../support/manual-clock.js";

const repo = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(repo, path), "utf8").replace(/\s+/g, " ");
const dir = mkdtempSync(join(tmpdir(), "sb-claims-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `switchboard args` in process with the real wiring; exit code and everything printed. */
async function cli(args: string[], env: Record<string, string> = {}) {
  let out = "";
  const io = {
    stdout: (t: string) => {
      out += t;
    },
    stderr: (t: string) => {
      out += t;
    },
  };
  const code = await runCli(args, {
    handlers: createCliHandlers(),
    env,
    cwd: dir,
    io,
    handleSignals: false,
    shutdown: AbortSignal.abort(),
    createLogger: () => silentProcessLogger(),
  });
  return { code, problems: out.split("\n").filter((l) => l.startsWith("  ✗ ")) };
}

describe("README.md and docs/configuration.md: check finds everything start would refuse", () => {
  it("the docs say so", () => {
    expect(read("README.md")).toContain("so it finds everything `start` would refuse");
    expect(read("docs/configuration.md")).toContain(
      "which runs the same code, so it finds everything `start` would refuse, with the same messages and exit code 2",
    );
  });

  const taken = createServer((s) => s.destroy());
  afterAll(() => new Promise((resolve) => taken.close(resolve)));

  it.each([
    [
      "a Telegram token of the wrong shape",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${VAR} reference
      "channels:\n  telegram:\n    botToken: ${TG}\n",
      { TG: "notatoken" },
    ],
    ["a data directory that cannot be created", "runtime:\n  dataDir: ./cfg.yaml/data\n", {}],
    ["a workspace that cannot be created", "agent:\n  workspaceDir: ./cfg.yaml/ws\n", {}],
    ["the worker role without Redis", "logging:\n  level: warn\n", { SWITCHBOARD_ROLE: "worker" }],
    ["an extension module that does not exist", "extensions:\n  modules: [./missing.js]\n", {}],
    [
      "an unknown id under a known provider",
      "models:\n  default: fake/nope\n  custom:\n    - { provider: fake, id: fake-1, api: openai-completions, baseUrl: http://127.0.0.1:9/v1 }\n",
      {},
    ],
    ["a port in use", "http:\n  port: PORT\n", {}],
  ] as const)("%s: check and start refuse it with the same lines, exit 2", async (_name, yaml, env) => {
    if (!taken.listening) await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    const file = join(dir, "cfg.yaml");
    writeFileSync(file, yaml.replace("PORT", String(port)));
    resetRegisteredModels();
    const check = await cli(["check", "--offline", "--config", file], env);
    resetRegisteredModels();
    const start = await cli(["start", "--config", file], env);
    expect(check.code).toBe(2);
    expect(start.code).toBe(2);
    expect(check.problems.length).toBeGreaterThan(0);
    expect(start.problems).toEqual(check.problems);
  });
});

describe("docs/runtime.md: the lease is renewed every fifth of its TTL", () => {
  it("the doc says so, and holdLease does so", async () => {
    expect(read("docs/runtime.md")).toContain("| `leaseTtlMs` | 15 000 | renewed every fifth of it;");
    const clock = new ManualClock();
    const sent: number[] = [];
    const stop = new AbortController();
    const t0 = clock.now();
    const holding = holdLease({
      clock,
      ttlMs: 15_000,
      acquiredAt: t0,
      renew: () => {
        sent.push(clock.now() - t0);
        return Promise.resolve(true);
      },
      signal: stop.signal,
    });
    await clock.advance(15_000);
    stop.abort();
    await holding;
    expect(sent).toEqual([3000, 6000, 9000, 12_000, 15_000]);
  });
});

describe("docs/slack.md: the adapter advertises 8,000 characters, with no setting for it", () => {
  it("the doc says so, and the adapter and the schema agree", () => {
    expect(read("docs/slack.md")).toContain("The adapter advertises 8,000 (its `maxMessageLength` option");
    expect(read("docs/slack.md")).toContain("the config has no setting for it");
    expect(new SlackAdapter({ botToken: "xoxb-1-2-abc" }).capabilities.maxMessageLength).toBe(8000);
    const slack = (ConfigSchema.properties.channels.properties as Record<string, { properties: object }>)
      .slack;
    expect(Object.keys(slack?.properties ?? {})).not.toContain("maxMessageLength");
  });
});

describe("memory per running thread: one figure wherever it is stated", () => {
  it("README, the docs, the example config and the schema state the same number", () => {
    const sources = [
      "README.md",
      "docs/configuration.md",
      "docs/runtime.md",
      "docs/performance.md",
      "config/switchboard.example.yaml",
      "src/gateway/config/schema.ts",
    ];
    const figures = new Map<string, string[]>();
    for (const source of sources) {
      const text = read(source);
      // "≈ 47 KB of heap per running thread", a table row "per running thread … | ≈ 47 KB",
      // "A running thread holds ≈ 47 KB of heap" (performance.md's figures of earlier runs are tables).
      for (const m of text.matchAll(
        /(\d+(?:\.\d+)?) KB of heap[^.|]{0,80}?per running thread|per running thread[^|]{0,80}?\| ≈ (\d+) KB|running thread holds ≈ (\d+) KB/g,
      ))
        figures.set(source, [...(figures.get(source) ?? []), m[1] ?? m[2] ?? m[3] ?? ""]);
    }
    expect([...figures.keys()].sort()).toEqual([...sources].sort());
    expect(new Set([...figures.values()].flat())).toEqual(new Set(["47"]));
  });
});

describe("docs/web-chat.md", () => {
  it("👀 acknowledges a mention in a group conversation; a direct one gets the typing indicator", async () => {
    expect(read("docs/web-chat.md")).toContain("in a group conversation, 👀 on a message that mentions it");
    const clock = new ManualClock();
    const adapter = new RecordingAdapter(clock);
    const base = {
      platform: "web" as const,
      eventId: "e1",
      user: { id: "web:local", isBot: false },
      text: "hi",
      attachments: [],
      timestamp: 0,
      mentioned: true,
    };
    await acknowledgeDelivery(
      adapter,
      {
        ...base,
        threadKey: "web:cgroup1",
        channelId: "cgroup1",
        isDirect: false,
        messageId: "web:cgroup1:m1",
      },
      { idle: true, ackReaction: "👀", log: silentProcessLogger() },
    );
    await acknowledgeDelivery(
      adapter,
      {
        ...base,
        threadKey: "web:cdirect1",
        channelId: "cdirect1",
        isDirect: true,
        messageId: "web:cdirect1:m1",
      },
      { idle: true, ackReaction: "👀", log: silentProcessLogger() },
    );
    const reactions = adapter.calls.filter((c) => c.op === "react");
    expect(reactions.map((c) => c.ref)).toEqual(["web:cgroup1:m1"]);
    expect(adapter.calls.filter((c) => c.op === "typing")).toHaveLength(1);
  });

  it("a write a browser marks as another site's is refused; one with neither header is judged by its CSRF token", async () => {
    const doc = read("docs/web-chat.md");
    expect(doc).toContain("A write a browser marks as coming from another site is refused");
    expect(doc).toContain("it is judged by the cookie and the CSRF token alone");
    const adapter = new WebChatAdapter({ admins: ["web:local"] });
    await adapter.start({ onMessage: async () => {}, onCommand: async () => {}, onReaction: async () => {} });
    const server = await serveWebChat(adapter);
    try {
      const client = await WebClient.open(await adapter.signInLink(`${server.url}/`));
      const post = (headers: Record<string, string>) =>
        fetch(`${server.url}/api/conversations`, {
          method: "POST",
          headers: {
            cookie: client.cookie,
            "x-csrf-token": client.csrf,
            "content-type": "application/json",
            ...headers,
          },
          body: "{}",
        });
      expect((await post({})).status).toBe(201);
      expect((await post({ "sec-fetch-site": "cross-site" })).status).toBe(403);
      expect((await post({ origin: "https://evil.example" })).status).toBe(403);
      expect((await post({ "sec-fetch-site": "same-origin" })).status).toBe(201);
      const noToken = await fetch(`${server.url}/api/conversations`, {
        method: "POST",
        headers: { cookie: client.cookie, "content-type": "application/json" },
        body: "{}",
      });
      expect(noToken.status).toBe(403);
    } finally {
      await adapter.stop();
      await server.close();
    }
  });
});

describe("docs/web-chat.md: a /name no command has goes to the agent as a message", () => {
  it("the doc says so, and the agent answers it", async () => {
    expect(read("docs/web-chat.md")).toContain(
      "A `/name` that no command has (`/deploy staging`) goes to the agent as an ordinary message, slash included",
    );
    const world = await World.create({ redis: false });
    try {
      const app = await world.start("all", { channels: [], web: true });
      if (!app.web || !app.webUrl) throw new Error("the web chat did not start");
      const client = await WebClient.open(await app.web.signInLink(app.webUrl));
      const { conversation } = await client.call<{ conversation: { id: string } }>(
        "POST",
        "api/conversations",
        { text: "/deploy staging" },
      );
      const answered = await until(async () => {
        const { messages } = await client.call<{ messages: { text: string; from: { isBot: boolean } }[] }>(
          "GET",
          `api/conversations/${conversation.id}/messages`,
        );
        return messages.find((m) => m.from.isBot && m.text === "alpha answers: /deploy staging");
      }, "the agent's answer to /deploy staging");
      expect(answered).toBeDefined();
    } finally {
      await world.close();
    }
  });
});

describe("docs/providers.md: a bare model id works in models.default as in /model", () => {
  it("the doc says so, and the config takes one", () => {
    expect(read("docs/providers.md")).toContain(
      "or by its bare id (`gpt-5.2`), in `/model` and in `models.default` alike",
    );
    const r = parseConfigText("models:\n  default: gpt-5.2\n", { env: {}, baseDir: dir });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    resetRegisteredModels();
    registerConfiguredModels(r.config.models);
    expect(modelIssues(r.config.models)).toEqual([]);
    const model = chooseDefaultModel(r.config.models);
    expect(model && modelRefOf(model)).toBe("openai/gpt-5.2");
  });
});
