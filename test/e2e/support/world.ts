/**
 * The world of the end-to-end tests: the platform fakes (Telegram, Slack in HTTP mode, Discord),
 * the fake LLM server with two providers, Redis under a prefix of its own, and Switchboard itself,
 * built from a YAML config the way `switchboard start` builds it (in process here; the process
 * tests run the real CLI with the same config).
 *
 * The fake model answers from the conversation: `[rm]` in the latest user text asks for a bash
 * call that needs approval, `[sleep]` for a long-running one, anything else is echoed (the last
 * line, without the author's name in front of it); after a tool result it reports that result. `alpha/one` speaks OpenAI chat completions, `beta/two` the
 * Anthropic Messages API, so `/model` crosses wire formats.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../../src/agent/clock.js";
import { createGateway, type Gateway } from "../../../src/gateway/app/index.js";
import type { Role } from "../../../src/gateway/cli/types.js";
import { parseConfigText } from "../../../src/gateway/config/index.js";
import { createLogger, type Logger, silentProcessLogger } from "../../../src/gateway/log.js";
import { FakeDiscord, GENERAL_ID } from "../../fakes/discord/server.js";
import {
  type FakeApi,
  type FakeLlmServer,
  type RecordedRequest,
  type ScriptedReply,
  startFakeLlmServer,
} from "../../fakes/llm-server.js";
import { FakeSlack } from "../../fakes/slack/server.js";
import { FakeTelegram, type TgUser } from "../../fakes/telegram/server.js";
import { redisUrl, uniquePrefix } from "../../support/redis.js";

export const TG_USERS = {
  alice: { id: 501, is_bot: false, first_name: "Alice", username: "alice" } satisfies TgUser,
  bob: { id: 502, is_bot: false, first_name: "Bob", username: "bob" } satisfies TgUser,
};
export const SLACK_ADMIN = "UADMIN";
export const SLACK_OTHER = "UOTHER";

/** Bounded poll for a condition (no fixed sleeps). */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The text of the newest user turn of a request, whatever the wire format. */
export function lastUserText(request: RecordedRequest): string {
  const messages = (request.body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      const texts = (m.content as { type: string; text?: string }[])
        .filter((c) => c.type === "text")
        .map((c) => c.text ?? "");
      if (texts.length > 0) return texts.join("");
    }
  }
  return "";
}

/** The tool result the request ends with, when it ends with one. */
function trailingToolResult(request: RecordedRequest): string | undefined {
  const messages = (request.body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  const last = messages.at(-1);
  if (last?.role === "tool") return String(last.content);
  if (last?.role === "user" && Array.isArray(last.content)) {
    const result = (last.content as { type: string; content?: unknown }[]).find(
      (c) => c.type === "tool_result",
    );
    if (result) return JSON.stringify(result.content);
  }
  return undefined;
}

let callSeq = 0;

/** `alice: ` in front of a message from a shared thread (the display names the fakes use have no spaces). */
const AUTHOR_PREFIX = /^[\w.-]{1,64}: /;

/** The fake model's behaviour (see the header). */
export function scriptedAnswer(
  label: string,
  pacing: Pick<ScriptedReply, "writeDelayMs" | "fragmentSize"> = {},
) {
  return (request: RecordedRequest): ScriptedReply => {
    const result = trailingToolResult(request);
    if (result !== undefined)
      return { text: `${label} saw the tool result: ${result.slice(0, 300)}`, ...pacing };
    const text = lastUserText(request);
    if (text.includes("[rm]"))
      return {
        toolCalls: [
          { id: `call_${++callSeq}`, name: "bash", args: { command: "rm -rf scratch && echo removed" } },
        ],
      };
    if (text.includes("[sleep]"))
      return {
        toolCalls: [
          {
            id: `call_${++callSeq}`,
            name: "bash",
            args: { command: "sleep 30 & echo $! > sleep.pid; wait" },
          },
        ],
      };
    // The last line, without the author's name that shared threads put in front of each message.
    const tail = (text.split("\n").at(-1) ?? "").replace(AUTHOR_PREFIX, "");
    return { text: `${label} answers: ${tail}`, usage: { input: 10, output: 5 }, ...pacing };
  };
}

export interface WorldOptions {
  /** Run on Redis (default) or on the embedded runtime with files. */
  redis?: boolean;
  /** Extra YAML appended to the config (top-level sections not used by the base config). */
  extraYaml?: string;
}

export interface YamlOptions {
  slackMode?: "http" | "socket";
  channels?: ("telegram" | "slack" | "discord")[];
  logLevel?: "debug" | "info" | "warn";
  /** Threads one worker runs at once. */
  concurrency?: number;
  /** Run the web chat (default off). */
  web?: boolean;
  /** `channels.telegram.pollTimeoutSeconds` (default: the config's default). */
  telegramPollTimeoutSeconds?: number;
  /** `files.maxFileMb` of every channel (default: the config's default). */
  maxFileMb?: number;
  /** `agent.compaction.keepRecentTokens` (default: the config's default). */
  keepRecentTokens?: number;
  /** `models.stallTimeoutMs` and `models.waitNoticeMs` (default: the config's defaults). */
  stallTimeoutMs?: number;
  waitNoticeMs?: number;
}

export class World {
  readonly dir = mkdtempSync(join(tmpdir(), "sb-e2e-"));
  readonly prefix = uniquePrefix("sbe2e");
  readonly gateways: Gateway[] = [];
  private constructor(
    readonly llm: FakeLlmServer,
    readonly telegram: FakeTelegram,
    readonly slack: FakeSlack,
    readonly discord: FakeDiscord,
    readonly options: WorldOptions,
  ) {}

  static async create(options: WorldOptions = {}): Promise<World> {
    const llm = await startFakeLlmServer();
    llm.respondWith("openai-completions", scriptedAnswer("alpha"));
    llm.respondWith("anthropic-messages", scriptedAnswer("beta"));
    const telegram = await new FakeTelegram({ groupRule: null, privateRule: null }).start();
    const slack = await new FakeSlack({ rateRules: {} }).start();
    slack.user(SLACK_ADMIN, "ada");
    slack.user(SLACK_OTHER, "otto");
    const discord = await new FakeDiscord({ rules: {} }).start();
    return new World(llm, telegram, slack, discord, options);
  }

  get discordUsers() {
    return { alice: this.discord.user("alice"), bob: this.discord.user("bob") };
  }

  /** Environment of the config: the platform secrets the fakes expect. */
  env(): Record<string, string> {
    return {
      TELEGRAM_BOT_TOKEN: this.telegram.token,
      SLACK_BOT_TOKEN: this.slack.botToken,
      SLACK_SIGNING_SECRET: this.slack.signingSecret,
      SLACK_APP_TOKEN: this.slack.appToken,
      DISCORD_BOT_TOKEN: this.discord.token,
    };
  }

  /**
   * The config file's text. `slackMode` picks Slack's inbound (HTTP by default: tests route events);
   * `logLevel` defaults to `warn` (`debug` with SB_E2E_LOG set).
   */
  yaml(o: YamlOptions = {}): string {
    const on = o.channels ?? ["telegram", "slack", "discord"];
    const users = this.discordUsers;
    const ch = (name: string) => on.includes(name as never);
    const files = o.maxFileMb !== undefined ? [`    files: { maxFileMb: ${o.maxFileMb} }`] : [];
    return [
      "channels:",
      "  telegram:",
      `    enabled: ${ch("telegram")}`,
      `    apiRoot: ${this.telegram.apiRoot()}`,
      `    admins: ["${TG_USERS.alice.id}"]`,
      `    allowedUsers: ["${TG_USERS.alice.id}", "${TG_USERS.bob.id}"]`,
      "    editIntervalMs: 100",
      ...files,
      ...(o.telegramPollTimeoutSeconds !== undefined
        ? [`    pollTimeoutSeconds: ${o.telegramPollTimeoutSeconds}`]
        : []),
      "  slack:",
      `    enabled: ${ch("slack")}`,
      `    mode: ${o.slackMode ?? "http"}`,
      `    apiUrl: ${this.slack.apiUrl}`,
      `    admins: ["${SLACK_ADMIN}"]`,
      "    editIntervalMs: 100",
      ...files,
      "  discord:",
      `    enabled: ${ch("discord")}`,
      `    apiUrl: ${this.discord.apiUrl}`,
      `    admins: ["${users.alice.id}"]`,
      "    editIntervalMs: 100",
      ...files,
      "  web:",
      `    enabled: ${o.web ?? false}`,
      ...files,
      "models:",
      "  default: alpha/one",
      ...(o.stallTimeoutMs !== undefined ? [`  stallTimeoutMs: ${o.stallTimeoutMs}`] : []),
      ...(o.waitNoticeMs !== undefined ? [`  waitNoticeMs: ${o.waitNoticeMs}`] : []),
      "  custom:",
      "    - provider: alpha",
      "      id: one",
      "      name: Alpha One",
      "      api: openai-completions",
      `      baseUrl: ${this.llm.baseUrl("openai-completions")}`,
      "    - provider: beta",
      "      id: two",
      "      name: Beta Two",
      "      api: anthropic-messages",
      `      baseUrl: ${this.llm.baseUrl("anthropic-messages")}`,
      "      reasoning: true",
      "      thinkingLevels: [off, low, medium, high]",
      "      input: [text, image]",
      "runtime:",
      ...(this.options.redis === false ? [] : [`  redisUrl: ${redisUrl()}`]),
      `  keyPrefix: "${this.prefix}"`,
      `  dataDir: ${join(this.dir, "data")}`,
      "  leaseTtlMs: 3000",
      ...(o.concurrency ? [`  concurrency: ${o.concurrency}`] : []),
      "  shutdownGraceMs: 1000",
      "agent:",
      `  workspaceDir: ${join(this.dir, "workspaces")}`,
      ...(o.keepRecentTokens !== undefined
        ? [`  compaction: { keepRecentTokens: ${o.keepRecentTokens} }`]
        : []),
      "http:",
      "  port: 0",
      "logging:",
      `  level: ${o.logLevel ?? (process.env.SB_E2E_LOG ? "debug" : "warn")}`,
      this.options.extraYaml ?? "",
    ].join("\n");
  }

  /** Writes the config to a file (for the CLI process tests) and returns its path. */
  writeConfig(name = "switchboard.yaml", o: YamlOptions = {}): string {
    const path = join(this.dir, name);
    writeFileSync(path, this.yaml(o));
    return path;
  }

  /** Builds and starts one process of `role` in this test process. */
  async start(role: Role = "all", o: YamlOptions = {}, scheduleClock?: Clock): Promise<Gateway> {
    const parsed = parseConfigText(this.yaml(o), {
      env: this.env(),
      baseDir: this.dir,
      fileName: "e2e.yaml",
    });
    if (!parsed.ok) throw new Error(`e2e config invalid: ${JSON.stringify(parsed.issues)}`);
    const logger: Logger = process.env.SB_E2E_LOG
      ? createLogger({ level: "debug", destination: 2, base: { role } })
      : silentProcessLogger();
    const gateway = await createGateway({
      config: parsed.config,
      role,
      logger,
      ...(scheduleClock ? { scheduleClock } : {}),
    });
    this.gateways.push(gateway);
    await gateway.start();
    return gateway;
  }

  /** Requests the fake model received on `api`, oldest first. */
  requests(api: FakeApi): RecordedRequest[] {
    return this.llm.requests.filter((r) => r.api === api);
  }

  async close(): Promise<void> {
    for (const g of this.gateways.splice(0).reverse()) await g.stop();
    await Promise.allSettled([
      this.telegram.close(),
      this.slack.close(),
      this.discord.close(),
      this.llm.close(),
    ]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export { GENERAL_ID };
