/**
 * `switchboard check`: every config problem with its path, then (for a valid config) a summary of
 * what would run and the reachability probes the wiring code supplies.
 */

import { formatIssue } from "../config/errors.js";
import { DEFAULT_CONFIG_FILES, type LoadConfigResult } from "../config/loader.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { ReadinessProbe } from "../http/readiness.js";
import { runProbes } from "../http/readiness.js";
import { redactSecrets } from "../log.js";
import { type CliIO, EXIT } from "./types.js";

/** First line of `check`: which file (or none) was read. */
export function describeSource(file: string | undefined): string {
  return file
    ? `Config: ${file}`
    : `Config: no file found (looked for $SWITCHBOARD_CONFIG, ${DEFAULT_CONFIG_FILES.join(", ")}); using defaults`;
}

/** Prints every issue of an invalid config with `write`; returns the exit code (2). */
export function printConfigIssues(
  result: Extract<LoadConfigResult, { ok: false }>,
  write: (text: string) => void,
): number {
  write(`${describeSource(result.file)}\n`);
  for (const issue of result.issues) write(`  ✗ ${redactSecrets(formatIssue(issue))}\n`);
  for (const w of result.warnings) write(`  ! ${redactSecrets(w)}\n`);
  const n = result.issues.length;
  write(
    `${n} ${n === 1 ? "problem" : "problems"} in the config. Fix ${n === 1 ? "it" : "them"} and run ` +
      "`switchboard check` again; docs/configuration.md describes every setting.\n",
  );
  return EXIT.usage;
}

/** The lines of what a valid config runs: channels, model, runtime, HTTP. */
export function summarizeConfig(config: SwitchboardConfig): string[] {
  const c = config.channels;
  const channels: string[] = [];
  if (c.slack.enabled) channels.push(`slack (${c.slack.mode} mode)`);
  if (c.discord.enabled) channels.push("discord");
  if (c.telegram.enabled) channels.push(`telegram (${c.telegram.mode})`);
  if (c.web.enabled) channels.push(`web chat (path ${c.web.path})`);
  const h = config.http;
  const url = h.publicUrl ?? `http://${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
  return [
    `channels: ${channels.length > 0 ? channels.join(", ") : "none enabled"}`,
    `model: ${config.models.default ?? "first model with credentials"} (thinking ${config.models.thinkingLevel})` +
      (config.models.custom.length > 0 ? `, ${config.models.custom.length} custom` : ""),
    config.runtime.redisUrl
      ? `runtime: Redis ${redactSecrets(config.runtime.redisUrl)} (key prefix ${config.runtime.keyPrefix}), ` +
        `${config.runtime.concurrency} threads per worker`
      : `runtime: embedded (no Redis), data in ${config.runtime.dataDir}`,
    `http: ${url}${h.token ? " (token required)" : " (loopback only, no token)"}`,
    `extensions: ${config.extensions.modules.length > 0 ? config.extensions.modules.join(", ") : "none"}`,
  ];
}

/**
 * Prints the summary of a valid config and runs `probes`; returns 0 when every probe is ok, 1
 * otherwise. `probes` undefined means none were wired (printed, not a failure).
 */
export async function printValidConfig(
  config: SwitchboardConfig,
  file: string | undefined,
  warnings: readonly string[],
  probes: readonly ReadinessProbe[] | undefined,
  io: CliIO,
): Promise<number> {
  io.stdout(`${describeSource(file)}\n  ✓ valid\n`);
  for (const line of summarizeConfig(config)) io.stdout(`  ${line}\n`);
  for (const w of warnings) io.stdout(`  ! ${redactSecrets(w)}\n`);
  if (probes === undefined) {
    io.stdout("Reachability: not checked.\n");
    return EXIT.ok;
  }
  if (probes.length === 0) {
    io.stdout("Reachability: nothing to check.\n");
    return EXIT.ok;
  }
  io.stdout("Reachability:\n");
  const report = await runProbes(probes, { timeoutMs: 5000 });
  for (const p of report.probes) {
    io.stdout(`  ${p.ok ? "✓" : "✗"} ${p.name}${p.detail ? `: ${p.detail}` : ""}\n`);
  }
  const failed = report.probes.filter((p) => !p.ok).length;
  if (failed === 0) return EXIT.ok;
  io.stdout(
    `${failed} of ${report.probes.length} ${report.probes.length === 1 ? "check" : "checks"} failed.\n`,
  );
  return EXIT.failure;
}
