/**
 * `switchboard check`: everything `start` would refuse, with the same messages (schema problems
 * with path and line, then what the wiring finds: unknown model ids, tool names…), then for a valid
 * config a summary of what would run and the reachability checks the wiring code supplies.
 */

import type { TProperties } from "@sinclair/typebox";
import type { ChannelSlice } from "../../adapters/channel.js";
import { BUILT_IN_CHANNELS } from "../../adapters/registry.js";
import { errorText } from "../../agent/errors.js";
import type { Env } from "../config/env.js";
import { type ConfigIssue, formatIssue } from "../config/errors.js";
import { DEFAULT_CONFIG_FILES, type LoadConfigResult, withLine } from "../config/loader.js";
import { collectSecretValues } from "../config/secrets.js";
import type { SwitchboardConfig } from "../config/types.js";
import { createLogger, redactSecrets } from "../log.js";
import {
  type CheckContext,
  type CheckProbe,
  type CheckResult,
  type CliDeps,
  type CliIO,
  EXIT,
  type Role,
} from "./types.js";

/** First line of `check`: which file (or none) was read. */
function describeSource(file: string | undefined): string {
  return file
    ? `Config: ${file}`
    : `Config: no file found (looked for $SWITCHBOARD_CONFIG, ${DEFAULT_CONFIG_FILES.join(", ")}); using defaults`;
}

export const defaultLogger: NonNullable<CliDeps["createLogger"]> = (opts) =>
  createLogger({ level: opts.level, secrets: opts.secrets, destination: opts.toStderr ? 2 : 1 });

/**
 * Prints config problems (each with its line in the file when it has one) with `write`, the same
 * way for `check` and for a `start` that refuses; returns the exit code (2).
 */
export function printConfigIssues(
  issues: readonly ConfigIssue[],
  source: Pick<LoadConfigResult, "file" | "warnings" | "locate">,
  write: (text: string) => void,
): number {
  write(`${describeSource(source.file)}\n`);
  for (const issue of issues) {
    const text = redactSecrets(formatIssue(withLine(issue, source.locate)));
    write(`  ✗ ${text.replace(/\n/g, "\n    ")}\n`);
  }
  for (const w of source.warnings) write(`  ! ${redactSecrets(w)}\n`);
  const n = issues.length;
  write(
    `${n} ${n === 1 ? "problem" : "problems"} in the config. Fix ${n === 1 ? "it" : "them"} and run ` +
      "`switchboard check` again; docs/configuration.md describes every setting.\n",
  );
  return EXIT.usage;
}

/** The lines of what a valid config runs: channels (each as its definition names it), model, runtime, HTTP. */
function summarizeConfig(config: SwitchboardConfig): string[] {
  const channels: string[] = [];
  for (const [name, slice] of Object.entries(config.channels) as [string, ChannelSlice<TProperties>][]) {
    if (!slice.enabled) continue;
    channels.push(BUILT_IN_CHANNELS[name]?.summary?.(slice) ?? name);
  }
  const h = config.http;
  const url = h.publicUrl ?? `http://${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
  return [
    `channels: ${channels.length > 0 ? channels.join(", ") : "none enabled"}`,
    `model: ${config.models.default ?? "first model with credentials"} (thinking ${config.models.thinkingLevel})` +
      (config.models.custom.length > 0 ? `, ${config.models.custom.length} custom` : ""),
    config.runtime.redisCluster
      ? `runtime: Redis Cluster ${redactSecrets(config.runtime.redisCluster.join(", "))} (key prefix ` +
        `${config.runtime.keyPrefix}), ${config.runtime.concurrency} threads per worker`
      : config.runtime.redisUrl
        ? `runtime: Redis ${redactSecrets(config.runtime.redisUrl)} (key prefix ${config.runtime.keyPrefix}), ` +
          `${config.runtime.concurrency} threads per worker`
        : `runtime: embedded (no Redis), data in ${config.runtime.dataDir}`,
    `http: ${url}${h.token ? " (token required)" : " (loopback only, no token)"}`,
    `extensions: ${config.extensions.modules.length > 0 ? config.extensions.modules.join(", ") : "none"}`,
  ];
}

/** Default bound of one probe. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * Runs every probe at once, each bounded by its `timeoutMs` (default 5 s), after which its signal
 * aborts; a throw or a timeout is "unreachable".
 */
async function runChecks(probes: readonly CheckProbe[]): Promise<CheckResult[]> {
  return Promise.all(
    probes.map(async (probe) => {
      const timeoutMs = probe.timeoutMs ?? PROBE_TIMEOUT_MS;
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<CheckResult>((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve({ ok: false, detail: `no answer within ${timeoutMs / 1000} s` });
        }, timeoutMs);
      });
      try {
        return await Promise.race([probe.check(abort.signal), timeout]);
      } catch (err) {
        return { ok: false, detail: redactSecrets(errorText(err)) };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/**
 * `switchboard check`: 2 when the config is invalid (or a platform refuses its credentials), 1 when
 * something is unreachable, else 0. `offline` skips the reachability checks.
 */
export async function runCheck(
  parsed: { offline: boolean; role: Role },
  loaded: LoadConfigResult,
  deps: CliDeps & { io: CliIO; env: Env },
): Promise<number> {
  const { offline, role } = parsed;
  const { io } = deps;
  if (!loaded.ok) return printConfigIssues(loaded.issues, loaded, io.stdout);
  const { config } = loaded;
  const handlers = deps.handlers ?? {};
  const logger = (deps.createLogger ?? defaultLogger)({
    level: "warn",
    secrets: collectSecretValues(config, deps.env),
    toStderr: true,
  });
  const ctx: CheckContext = {
    config,
    configFile: loaded.file,
    warnings: loaded.warnings,
    logger,
    io,
    env: deps.env,
    role,
  };
  try {
    const deeper = handlers.validateConfig ? await handlers.validateConfig(ctx) : [];
    if (deeper.length > 0) return printConfigIssues(deeper, loaded, io.stdout);

    io.stdout(`${describeSource(loaded.file)}\n  ✓ valid\n`);
    for (const line of summarizeConfig(config)) io.stdout(`  ${line}\n`);
    for (const line of handlers.describeConfig ? await handlers.describeConfig(ctx) : []) {
      io.stdout(`  ${redactSecrets(line)}\n`);
    }
    for (const w of loaded.warnings) io.stdout(`  ! ${redactSecrets(w)}\n`);
    if (offline || !handlers.checkProbes) {
      io.stdout(`Reachability: not checked${offline ? " (--offline)" : ""}.\n`);
      return EXIT.ok;
    }
    const probes = await handlers.checkProbes(ctx);
    if (probes.length === 0) {
      io.stdout("Reachability: nothing to check.\n");
      return EXIT.ok;
    }
    io.stdout("Reachability:\n");
    const results = await runChecks(probes);
    results.forEach((r, i) => {
      io.stdout(
        `  ${r.ok ? "✓" : "✗"} ${probes[i]?.name}${r.detail ? `: ${redactSecrets(r.detail)}` : ""}\n`,
      );
    });
    const refused = results.filter((r) => !r.ok && r.refused).length;
    const failed = results.filter((r) => !r.ok).length;
    if (failed === 0) return EXIT.ok;
    const of = `${failed} of ${results.length} ${results.length === 1 ? "check" : "checks"} failed`;
    if (refused > 0) {
      io.stdout(
        `${of}: credentials or model ids in the config were refused. Fix them and run \`switchboard check\` again.\n`,
      );
      return EXIT.usage;
    }
    io.stdout(`${of}.\n`);
    return EXIT.failure;
  } catch (err) {
    io.stderr(`switchboard check: ${redactSecrets(errorText(err))}\n`);
    return EXIT.failure;
  }
}
