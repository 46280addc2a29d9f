/**
 * What each `switchboard` command does with the running system (the CLI frame in src/gateway/cli
 * parses, loads the config and prints): `start` runs a process of the chosen role until the signal,
 * `check` probes Redis and each platform, `export`/`import` move sessions through the session store,
 * `register-commands` puts the commands into each platform's menu.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { dirname } from "node:path";
import { Redis } from "ioredis";
import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import { MemoryApprovalStore } from "../../queue/approvals/index.js";
import { FileSessionStore } from "../../queue/store/file-store.js";
import { RedisSessionStore } from "../../queue/store/redis-store.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { CliHandlers, CommandContext } from "../cli/types.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { ReadinessProbe } from "../http/readiness.js";
import type { Logger } from "../log.js";
import { buildAdapters } from "./adapters.js";
import { loadExtensions } from "./extensions.js";
import { createGateway } from "./gateway.js";
import { platformProbes } from "./probes.js";
import { sandboxProbe } from "./sandbox.js";

/** The handlers `src/main.ts` passes to `runCli`. */
export function createCliHandlers(): CliHandlers {
  return {
    async start(ctx) {
      const gateway = await createGateway({
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

    checkProbes(ctx) {
      const probes: ReadinessProbe[] = [];
      const url = ctx.config.runtime.redisUrl;
      if (url) probes.push(redisProbe(url));
      probes.push(...platformProbes(ctx.config.channels));
      probes.push(sandboxProbe(ctx.config.tools, ctx.config.agent.workspaceDir));
      return probes;
    },

    async exportThread(ctx) {
      return withStore(ctx, async (store) => {
        const meta = await store.getThreadMeta(ctx.threadKey);
        const sessionId = ctx.sessionId ?? meta?.currentSessionId;
        if (!sessionId) throw new Error(`Thread ${ctx.threadKey} has no session to export.`);
        const text = await store.exportJsonl(ctx.threadKey, sessionId);
        return text.split("\n").filter((line) => line !== "");
      });
    },

    async importSession(ctx) {
      const text = ctx.text ?? ctx.entries.map((e) => JSON.stringify(e)).join("\n");
      const threadKey = ctx.threadKey ?? `web:imported-${randomUUID().slice(0, 8)}`;
      return withStore(ctx, async (store) => {
        const r = await store.importJsonl(text, threadKey);
        return { threadKey: r.threadKey, sessionId: r.sessionId };
      });
    },

    async registerCommands(ctx) {
      const runner = await loadExtensions({
        extensions: ctx.config.extensions,
        approval: ctx.config.approval,
        approvalStore: new MemoryApprovalStore(),
        isAdmin: () => false,
        workspaceRoot: ctx.config.agent.workspaceDir,
        baseDir: ctx.configFile ? dirname(ctx.configFile) : process.cwd(),
        logger: ctx.logger,
      });
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

/** Runs `fn` with the deployment's session store (Redis, or the files under `dataDir`), then closes it. */
async function withStore<T>(ctx: CommandContext, fn: (store: SessionStore) => Promise<T>): Promise<T> {
  const { runtime } = ctx.config;
  if (!runtime.redisUrl) {
    const store = new FileSessionStore({ dataDir: runtime.dataDir, logger: ctx.logger });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }
  const redis = connect(runtime.redisUrl, ctx.logger);
  const store = new RedisSessionStore({ redis, prefix: runtime.keyPrefix, logger: ctx.logger });
  try {
    return await fn(store);
  } finally {
    await store.close();
    await redis.quit().catch(() => redis.disconnect());
  }
}

function connect(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on("error", (err: unknown) =>
    logger.debug({ err: err instanceof Error ? err.message : String(err) }, "redis connection error"),
  );
  return redis;
}

/** PING over a connection opened for this check and closed after it (so `check` can exit). */
function redisProbe(url: string): ReadinessProbe {
  return {
    name: "redis",
    async check() {
      const client = new Redis(url, {
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
        connectTimeout: 2000,
      });
      client.on("error", () => {});
      try {
        await client.connect();
        const started = performance.now();
        const pong = await client.ping();
        return { ok: pong === "PONG", detail: `${pong} in ${Math.round(performance.now() - started)} ms` };
      } finally {
        client.disconnect();
      }
    },
  };
}
