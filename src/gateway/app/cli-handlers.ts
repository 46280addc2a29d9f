/**
 * What each `switchboard` command does with the running system (the CLI frame in src/gateway/cli
 * parses, loads the config and prints): `start` runs a process of the chosen role until the signal,
 * `check` probes Redis and each platform, `export`/`import` move sessions through the session store,
 * `usage` reads the budget ledger's usage rows, `register-commands` puts the commands into each
 * platform's menu.
 */
import { once } from "node:events";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import type { TProperties } from "@sinclair/typebox";
import type { ChannelSlice, RegisteredChannel } from "../../adapters/channel.js";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../adapters/registry.js";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import {
  type ImportedTurn,
  isConversationId,
  newConversationId,
  showImportedSession,
  threadKeyOf,
  type WebChatStore,
  type WebConversation,
} from "../../adapters/web/index.js";
import { findModel, hasCredentials } from "../../agent/llm/models.js";
import { pathToLeaf, type SessionEntry } from "../../agent/session/index.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import { MemoryApprovalStore } from "../../queue/approvals/memory-store.js";
import type { RedisClient, RedisTarget } from "../../queue/redis/client.js";
import { FileSessionStore } from "../../queue/store/file-store.js";
import type { SessionStore } from "../../queue/store/types.js";
import { type CheckProbe, CliError, type CliHandlers, type CommandContext, EXIT } from "../cli/types.js";
import { redisTargetOf } from "../config/redis-target.js";
import type { SwitchboardConfig } from "../config/types.js";
import { type Logger, silentProcessLogger } from "../log.js";
import { buildAdapters } from "./adapters.js";
import { budgetsFileOf, openBudgetLedger } from "./budget-ledger.js";
import { toolIssues } from "./config-check.js";
import { loadExtensions } from "./extensions.js";
import { createGateway } from "./gateway.js";
import { mcpProbes } from "./mcp.js";
import { modelProbes } from "./model-probe.js";
import { chooseDefaultModel, modelIssues, modelRefOf, registerConfiguredModels } from "./models.js";
import { portHeldBySwitchboard, preflightIssues } from "./preflight.js";
import { redisProbe } from "./redis-probe.js";
import { sandboxProbe } from "./sandbox.js";
import { openSharedRedis } from "./shared-redis.js";
import { webChatStores } from "./web-stores.js";

/**
 * The handlers `src/main.ts` passes to `runCli`. `channels`: the channel registry (default the
 * built-in one; a test registers a platform of its own).
 */
export function createCliHandlers(options: { channels?: ChannelRegistry } = {}): CliHandlers {
  const registry = options.channels ?? BUILT_IN_CHANNELS;
  // `check` asks twice (its problems, then its summary); the extensions load once, as in start.
  const loaded = new WeakMap<SwitchboardConfig, Promise<ExtensionRunner>>();
  const quietExtensions = (ctx: CommandContext): Promise<ExtensionRunner> => {
    let runner = loaded.get(ctx.config);
    if (!runner) {
      runner = extensionsOf(ctx);
      loaded.set(ctx.config, runner);
    }
    return runner;
  };
  return {
    async start(ctx) {
      const gateway = await createGateway({
        channels: registry,
        config: ctx.config,
        role: ctx.role,
        logger: ctx.logger,
        ...(ctx.configFile ? { configFile: ctx.configFile } : {}),
        announce: (line) => ctx.io.stdout(`${line}\n`),
      });
      const aborted = ctx.signal.aborted ? Promise.resolve() : once(ctx.signal, "abort").then(() => {});
      try {
        // A signal while starting (Redis slow to answer) stops at once instead of waiting for it.
        await Promise.race([gateway.start(), aborted]);
        await aborted;
      } finally {
        await gateway.stop();
      }
    },

    // The same checks, in the same order, as `start` (createGateway): preflight, then what the
    // loaded extensions decide (model ids, tool names).
    async validateConfig(ctx) {
      registerConfiguredModels(ctx.config.models);
      const early = await preflightIssues(ctx.config, ctx.role, { runningSwitchboard: "leave" });
      const runner = await quietExtensions(ctx);
      return [...early, ...modelIssues(ctx.config.models), ...toolIssues(ctx.config, runner)];
    },

    async describeConfig(ctx) {
      registerConfiguredModels(ctx.config.models);
      const lines: string[] = [];
      const held = await portHeldBySwitchboard(ctx.config.http);
      if (held) lines.push(`! ${held}`);
      // An extension whose code throws while loading is disabled at start (the process carries on).
      for (const e of (await quietExtensions(ctx)).extensions()) {
        if (!e.enabled && e.failure)
          lines.push(`! extension "${e.name}" fails while loading and would be disabled: ${e.failure.error}`);
      }
      const model = chooseDefaultModel(ctx.config.models);
      if (!model) {
        lines.push(
          "! no model has credentials here: threads will answer with set-up instructions. Set " +
            "ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or add a model under models.custom (docs/providers.md)",
        );
        return lines;
      }
      const ref = modelRefOf(model);
      lines.push(
        hasCredentials(model)
          ? `new threads use ${ref}`
          : `! new threads use ${ref}, which has no credentials here: set its provider's API key (docs/providers.md)`,
      );
      return lines;
    },

    async checkProbes(ctx) {
      const probes: CheckProbe[] = [];
      const target = redisTargetOf(ctx.config.runtime);
      if (target) probes.push(redisProbe(target, ctx.config.runtime.waitReplicas));
      probes.push(...(await credentialProbes(ctx, registry)));
      probes.push(sandboxProbe(ctx.config.tools, ctx.config.agent.workspaceDir));
      probes.push(...mcpProbes(ctx.config.tools, ctx.config.agent.workspaceDir, ctx.logger));
      registerConfiguredModels(ctx.config.models);
      probes.push(...modelProbes(ctx.config.models, findModel));
      return probes;
    },

    async exportThread(ctx) {
      return withStore(ctx, async (store) => {
        const sessions = await store.listSessions(ctx.threadKey);
        const where = redisTargetOf(ctx.config.runtime) ? "in Redis" : `under ${ctx.config.runtime.dataDir}`;
        if (sessions.length === 0) {
          throw new CliError(
            `thread ${ctx.threadKey} has no sessions ${where}. Check the thread key (/status in the thread ` +
              "shows it) and that --config names the deployment's config.",
            EXIT.usage,
          );
        }
        const meta = await store.getThreadMeta(ctx.threadKey);
        const current = meta?.currentSessionId ?? sessions.at(-1)?.header.id;
        const sessionId = ctx.sessionId ?? current;
        if (!sessions.some((s) => s.header.id === sessionId)) {
          const list = sessions
            .map(
              (s) =>
                `  ${s.header.id}  started ${s.header.timestamp}${s.header.id === current ? "  (current)" : ""}`,
            )
            .join("\n");
          throw new CliError(
            `thread ${ctx.threadKey} has no session "${ctx.sessionId}". Its sessions:\n${list}\n` +
              `Export one with: switchboard export ${ctx.threadKey} --session <id>`,
            EXIT.usage,
          );
        }
        const text = await store.exportJsonl(ctx.threadKey, sessionId as string);
        return text.split("\n").filter((line) => line !== "");
      });
    },

    // Without --thread the session becomes a new web chat conversation, which the page lists and
    // opens; a web thread key given must be one the page can open.
    async importSession(ctx) {
      const text = ctx.text ?? ctx.entries.map((e) => JSON.stringify(e)).join("\n");
      const threadKey = ctx.threadKey ?? threadKeyOf(newConversationId());
      const web = threadKey.startsWith("web:");
      if (web && !isConversationId(threadKey.slice("web:".length))) {
        throw new CliError(
          `--thread ${threadKey} is not a web chat conversation: the web chat opens web:c followed by 4 to 32 ` +
            "lowercase letters or digits (e.g. web:c3k9x0a1b2). Leave --thread out to make a new conversation.",
          EXIT.usage,
        );
      }
      return withStore(ctx, async (store, webStore) => {
        const r = await store.importJsonl(text, threadKey);
        if (!web) return { threadKey: r.threadKey, sessionId: r.sessionId };
        const all = await store.readAll(r.threadKey, r.sessionId);
        const conversation = await showImportedSession(
          webStore(),
          threadKey.slice("web:".length),
          pathToLeaf(all.entries, all.leafId).flatMap(turnOf),
        );
        return {
          threadKey: r.threadKey,
          sessionId: r.sessionId,
          note: webChatNote(ctx.config, conversation),
        };
      });
    },

    // The ledger of the config's mode, as start opens it; nothing else of the gateway. An embedded
    // deployment that never recorded a call has no file yet: nothing spent (and nothing created).
    async usage(ctx) {
      if (!redisTargetOf(ctx.config.runtime) && !existsSync(budgetsFileOf(ctx.config))) return [];
      const shared = await openSharedRedis(ctx.config.runtime, ctx.logger);
      try {
        const ledger = await openBudgetLedger(ctx.config, shared);
        try {
          return await ledger.exportUsage(ctx.sinceMs, ctx.untilMs);
        } catch (err) {
          // A range over 1000 days: the person at the terminal asked for too much.
          if (err instanceof RangeError)
            throw new CliError(`${err.message} Ask for a shorter range (--since, --until).`, EXIT.usage);
          throw err;
        } finally {
          await ledger.close();
        }
      } finally {
        if (shared) await shared.redis.quit().catch(() => shared.redis.disconnect());
      }
    },

    async registerCommands(ctx) {
      const runner = await extensionsOf(ctx, false);
      const specs = runner.commandSpecs();
      const built = await buildAdapters({
        channels: onlyPlatforms(ctx.config, ctx.platforms),
        http: ctx.config.http,
        inbound: false,
        redis: undefined,
        logger: ctx.logger,
      });
      const lines: string[] = [];
      for (const platform of ctx.platforms) {
        const adapter: ChannelAdapter | undefined = built.byPlatform.get(platform as Platform);
        if (!adapter?.registerCommands) {
          lines.push(
            `${platform}: commands come from the app's manifest (docs/slack.md); nothing to register`,
          );
          continue;
        }
        await adapter.registerCommands(specs);
        lines.push(`${platform}: ${specs.length} commands registered`);
      }
      return lines;
    },
  };
}

/**
 * Each enabled channel's credential checks: its definition's `probe` (no SDK loaded), else its
 * adapter's `probe()`, from an adapter built as `start` builds it but never started.
 */
async function credentialProbes(ctx: CommandContext, registry: ChannelRegistry): Promise<CheckProbe[]> {
  const slices = ctx.config.channels as unknown as Record<string, ChannelSlice<TProperties> | undefined>;
  const probes: CheckProbe[] = [];
  const unprobed: Record<string, RegisteredChannel> = {};
  for (const [name, definition] of Object.entries(registry)) {
    const slice = slices[name];
    if (!slice?.enabled) continue;
    if (definition.probe) probes.push(...definition.probe(slice));
    else unprobed[name] = definition;
  }
  if (Object.keys(unprobed).length === 0) return probes;
  const built = await buildAdapters({
    channels: ctx.config.channels,
    http: ctx.config.http,
    inbound: true,
    redis: undefined,
    registry: unprobed,
    logger: ctx.logger,
  });
  return [...probes, ...[...built.byPlatform.values()].flatMap((adapter) => adapter.probe?.() ?? [])];
}

/**
 * The extensions as `start` loads them (what they register), without a runtime to act on. `quiet`
 * (for `check`): what fails is reported in check's own lines, not as log lines between them.
 */
function extensionsOf(ctx: CommandContext, quiet = true): Promise<ExtensionRunner> {
  return loadExtensions({
    extensions: ctx.config.extensions,
    approval: ctx.config.approval,
    approvalStore: new MemoryApprovalStore(),
    isAdmin: () => false,
    workspaceRoot: ctx.config.agent.workspaceDir,
    baseDir: ctx.configFile ? dirname(ctx.configFile) : process.cwd(),
    logger: quiet ? silentProcessLogger() : ctx.logger,
  });
}

/** `config.channels` with only `platforms` enabled (the others off), for outbound-only adapters. */
function onlyPlatforms(
  config: SwitchboardConfig,
  platforms: readonly string[],
): SwitchboardConfig["channels"] {
  const c = config.channels;
  const pick = <T extends { enabled: boolean }>(name: string, slice: T): T => ({
    ...slice,
    enabled: platforms.includes(name) && slice.enabled,
  });
  return {
    slack: pick("slack", c.slack),
    discord: pick("discord", c.discord),
    telegram: pick("telegram", c.telegram),
    web: { ...c.web, enabled: false },
  };
}

/**
 * Runs `fn` with the deployment's session store (Redis, or the files under `dataDir`) and a getter
 * of its web chat store (made on first use), then closes them.
 */
async function withStore<T>(
  ctx: CommandContext,
  fn: (store: SessionStore, web: () => WebChatStore) => Promise<T>,
): Promise<T> {
  const { runtime } = ctx.config;
  const target = redisTargetOf(runtime);
  let web: WebChatStore | undefined;
  const run = async (store: SessionStore, shared: Parameters<typeof webChatStores>[0]) => {
    try {
      return await fn(store, () => {
        web ??= webChatStores(shared, runtime.keyPrefix, runtime.dataDir, ctx.logger).store;
        return web;
      });
    } finally {
      await Promise.allSettled([store.close(), web?.close()]);
    }
  };
  if (!target) return run(new FileSessionStore({ dataDir: runtime.dataDir, logger: ctx.logger }), undefined);
  const redis = await connect(target, ctx.logger);
  // Loaded here, not at the top: `start` in embedded mode must not load ioredis through it.
  const kit = await import("./redis-kit.js");
  try {
    return await run(new kit.RedisSessionStore({ redis, prefix: runtime.keyPrefix, logger: ctx.logger }), {
      redis,
      kit,
    });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** What a web chat page shows of an imported session's entry: the text of a user or assistant message. */
function turnOf(entry: SessionEntry): ImportedTurn[] {
  if (entry.type !== "message") return [];
  const m = entry.message as { role?: unknown; content?: unknown };
  if (m.role !== "user" && m.role !== "assistant") return [];
  const text =
    typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? m.content
            .filter(
              (c): c is { type: "text"; text: string } => c?.type === "text" && typeof c.text === "string",
            )
            .map((c) => c.text)
            .join("\n")
        : "";
  return text.trim() ? [{ fromBot: m.role === "assistant", text }] : [];
}

/** Where the imported conversation is on the page (or that the web chat is off in this config). */
function webChatNote(config: SwitchboardConfig, conversation: WebConversation): string {
  if (!config.channels.web.enabled)
    return `the web chat would list it as "${conversation.title}"; it is off in this config (channels.web.enabled: true turns it on)`;
  const h = config.http;
  const origin = (h.publicUrl ?? `http://${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`).replace(
    /\/+$/,
    "",
  );
  const path = config.channels.web.path.endsWith("/")
    ? config.channels.web.path
    : `${config.channels.web.path}/`;
  return `the web chat lists it as "${conversation.title}": ${origin}${path}c/${conversation.id}`;
}

async function connect(target: RedisTarget, logger: Logger): Promise<RedisClient> {
  const { createRedisClient } = await import("../../queue/redis/client.js");
  const redis = createRedisClient(target, {
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    disconnectTimeout: 100,
  });
  redis.on("error", (err: unknown) => logger.debug({ err }, "redis connection error"));
  return redis;
}
