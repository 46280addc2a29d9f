/**
 * The commands behind `runCli`: load the config (printing every problem with its path and line),
 * create the logger, and hand each command to the wiring code's handler.
 */

import { once } from "node:events";
import { createWriteStream, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { errorMessage } from "../../agent/errors.js";
import type { Env } from "../config/env.js";
import { ConfigError } from "../config/errors.js";
import { loadConfig } from "../config/loader.js";
import { collectSecretValues } from "../config/secrets.js";
import { type Logger, redactSecrets } from "../log.js";
import type { ParsedCommand } from "./args.js";
import { defaultLogger, printConfigIssues, runCheck } from "./check.js";
import { checkHealth } from "./health.js";
import { parseSessionFile } from "./session-file.js";
import {
  type CliDeps,
  CliError,
  type CliHandlers,
  type CliIO,
  COMMAND_PLATFORMS,
  type CommandContext,
  EXIT,
  type StartContext,
} from "./types.js";
import { instantOf, usageCsv, usageJson } from "./usage.js";

function errorLine(err: unknown): string {
  return redactSecrets(errorMessage(err).trim() || "unknown error");
}

/** Runs a parsed command other than help and version; returns the exit code. */
export async function runCommand(
  parsed: Exclude<ParsedCommand, { kind: "help" } | { kind: "version" }>,
  deps: CliDeps & { io: CliIO; env: Env; cwd: string },
): Promise<number> {
  const { io, env, cwd } = deps;
  const http = "http" in parsed ? parsed.http : undefined;
  const loaded = loadConfig({ path: parsed.config, env, cwd, ...(http ? { http } : {}) });
  if (parsed.kind === "check") return runCheck(parsed, loaded, deps);
  if (!loaded.ok) return printConfigIssues(loaded.issues, loaded, io.stderr);
  if (parsed.kind === "health") return checkHealth(loaded.config, io);

  const { config } = loaded;
  const logger = (deps.createLogger ?? defaultLogger)({
    level: config.logging.level,
    secrets: collectSecretValues(config, env),
    toStderr: parsed.kind !== "start",
  });
  const ctx: CommandContext = { config, configFile: loaded.file, warnings: loaded.warnings, logger, io, env };
  for (const w of loaded.warnings) logger.warn({ configFile: loaded.file }, w);
  const handlers = deps.handlers ?? {};

  try {
    switch (parsed.kind) {
      case "start":
        return await start(parsed.role, ctx, handlers, deps, logger);
      case "export":
        return await exportThread(parsed, ctx, handlers, cwd);
      case "import":
        return await importSession(parsed, ctx, handlers, cwd);
      case "usage":
        return await usage(parsed, ctx, handlers);
      case "register-commands":
        return await registerCommands(parsed.platforms, ctx, handlers);
    }
  } catch (err) {
    // What start refuses after the schema (an unknown model id, tool name…): the same report as check.
    if (err instanceof ConfigError) return printConfigIssues(err.issues, loaded, io.stderr);
    if (err instanceof CliError) {
      io.stderr(`switchboard ${parsed.kind}: ${redactSecrets(err.message)}\n`);
      return err.exitCode;
    }
    io.stderr(`switchboard ${parsed.kind}: ${errorLine(err)}\n`);
    return EXIT.failure;
  }
}

function missing(command: string, io: CliIO): number {
  io.stderr(
    `switchboard ${command}: not available in this build (no handler for it was passed to runCli by src/main.ts).\n`,
  );
  return EXIT.failure;
}

async function start(
  role: StartContext["role"],
  ctx: CommandContext,
  handlers: CliHandlers,
  deps: CliDeps,
  logger: Logger,
): Promise<number> {
  // What the role needs (Redis for gateway and worker) is the wiring's preflight, as for check.
  if (!handlers.start) return missing("start", ctx.io);
  const controller = new AbortController();
  const useSignals = deps.handleSignals ?? true;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      logger.info({ signal }, "shutting down (send the signal again to exit at once)");
      controller.abort();
    } else {
      ctx.io.stderr(`switchboard: second ${signal}, exiting now\n`);
      process.exit(EXIT.failure);
    }
  };
  if (useSignals) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  try {
    await handlers.start({
      ...ctx,
      role,
      signal: useSignals ? controller.signal : (deps.shutdown ?? controller.signal),
    });
    return EXIT.ok;
  } finally {
    if (useSignals) {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }
}

async function exportThread(
  parsed: Extract<ParsedCommand, { kind: "export" }>,
  ctx: CommandContext,
  handlers: CliHandlers,
  cwd: string,
): Promise<number> {
  if (!handlers.exportThread) return missing("export", ctx.io);
  const lines = await handlers.exportThread({
    ...ctx,
    threadKey: parsed.threadKey,
    sessionId: parsed.sessionId,
  });
  if (parsed.output === undefined) {
    for await (const line of lines) ctx.io.stdout(`${line}\n`);
    return EXIT.ok;
  }
  const target = resolve(cwd, parsed.output);
  const out = createWriteStream(target);
  const failed = once(out, "error").then(([err]) => {
    throw err;
  });
  let count = 0;
  for await (const line of lines) {
    count += 1;
    if (!out.write(`${line}\n`)) await Promise.race([once(out, "drain"), failed]);
  }
  out.end();
  await Promise.race([once(out, "finish"), failed]);
  ctx.io.stderr(`wrote ${count} lines to ${target}\n`);
  return EXIT.ok;
}

async function importSession(
  parsed: Extract<ParsedCommand, { kind: "import" }>,
  ctx: CommandContext,
  handlers: CliHandlers,
  cwd: string,
): Promise<number> {
  if (!handlers.importSession) return missing("import", ctx.io);
  const file = resolve(cwd, parsed.file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    ctx.io.stderr(
      `switchboard import: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})\n`,
    );
    return EXIT.usage;
  }
  const { entries, problems } = parseSessionFile(text);
  if (problems.length > 0) {
    ctx.io.stderr(`switchboard import: ${file} is not a pi session file:\n`);
    for (const p of problems.slice(0, 20)) ctx.io.stderr(`  ${p}\n`);
    return EXIT.usage;
  }
  const where = await handlers.importSession({ ...ctx, file, entries, text, threadKey: parsed.threadKey });
  ctx.io.stdout(
    `imported ${entries.length} lines into thread ${where.threadKey}` +
      (where.sessionId ? ` (session ${where.sessionId})` : "") +
      "\n" +
      (where.note ? `  ${where.note}\n` : ""),
  );
  return EXIT.ok;
}

async function registerCommands(
  named: readonly (typeof COMMAND_PLATFORMS)[number][],
  ctx: CommandContext,
  handlers: CliHandlers,
): Promise<number> {
  if (!handlers.registerCommands) return missing("register-commands", ctx.io);
  const enabled = COMMAND_PLATFORMS.filter((p) => ctx.config.channels[p].enabled);
  const platforms = named.length > 0 ? named : enabled;
  const off = platforms.filter((p) => !ctx.config.channels[p].enabled);
  if (off.length > 0) {
    ctx.io.stderr(
      `switchboard register-commands: ${off.join(", ")} ${off.length === 1 ? "is" : "are"} not enabled in the config ` +
        "(set the token, or channels.<platform>.enabled: true)\n",
    );
    return EXIT.usage;
  }
  if (platforms.length === 0) {
    ctx.io.stderr("switchboard register-commands: no platform is enabled; nothing to register\n");
    return EXIT.usage;
  }
  const lines = await handlers.registerCommands({ ...ctx, platforms });
  for (const line of lines) ctx.io.stdout(`${line}\n`);
  return EXIT.ok;
}

async function usage(
  parsed: Extract<ParsedCommand, { kind: "usage" }>,
  ctx: CommandContext,
  handlers: CliHandlers,
): Promise<number> {
  if (!handlers.usage) return missing("usage", ctx.io);
  const now = Date.now();
  const { timeZone } = ctx.config.budgets;
  const sinceMs = instantOf(parsed.since, now, timeZone);
  const untilMs = parsed.until ? instantOf(parsed.until, now, timeZone) : now;
  if (untilMs <= sinceMs) {
    ctx.io.stderr(
      `switchboard usage: --until (${new Date(untilMs).toISOString()}) must come after --since ` +
        `(${new Date(sinceMs).toISOString()})\n`,
    );
    return EXIT.usage;
  }
  const rows = await handlers.usage({ ...ctx, sinceMs, untilMs });
  ctx.io.stdout(parsed.format === "json" ? usageJson(rows) : usageCsv(rows));
  return EXIT.ok;
}
