/**
 * From a schema-valid config to the resolved `SwitchboardConfig`: rules that span fields (a channel
 * that is on needs its tokens; a non-loopback bind needs an HTTP token; patterns must compile), the
 * decision of which channels run, and absolute paths.
 */
import { isAbsolute, resolve } from "node:path";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../adapters/registry.js";
import { canonicalTimeZone } from "../../extensions/schedules/index.js";
import { budgetIssues } from "./budgets.js";
import type { VariableReference } from "./env.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import { mcpIssues } from "./mcp.js";
import { redisIssues } from "./redis-target.js";
import { scheduleIssues } from "./schedules.js";
import type { ValidatedConfig } from "./schema.js";
import { credentialVariables } from "./secrets.js";
import type { ChannelsConfig, SwitchboardConfig } from "./types.js";

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** `host:port` of a Redis URL, without credentials (for messages); the field name when it does not parse. */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "6379"}`;
  } catch {
    return "runtime.redisUrl";
  }
}

/** Why `url` cannot be a Redis address ioredis connects to, or undefined when it can. */
function redisUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "is not a valid URL; write redis://host:6379 (or rediss:// for TLS), with an optional /<db number>";
  }
  if (!u.hostname) return "names no host; write redis://host:6379";
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) return `has "/${db}" where a database number belongs (e.g. /0)`;
  return undefined;
}

export interface ResolveResult {
  config: SwitchboardConfig;
  issues: ConfigIssue[];
  /** Things that work but are probably not what was meant (a token set without its partner). */
  warnings: string[];
}

interface Requirement {
  field: string;
  value: unknown;
  variable: string;
}

/** Decides `enabled` for one platform: explicit value, else whether every required secret is present. */
function decide(
  name: string,
  explicit: boolean | undefined,
  required: Requirement[],
  issues: ConfigIssue[],
  warnings: string[],
): boolean {
  const missing = required.filter((r) => r.value === undefined || r.value === "");
  if (explicit === true) {
    for (const r of missing) {
      issues.push({
        path: `channels.${name}.${r.field}`,
        message: `is required because channels.${name}.enabled is true; set ${r.variable} or ${r.field}File`,
      });
    }
    return true;
  }
  if (explicit === false) return false;
  if (missing.length === 0) return true;
  if (missing.length < required.length) {
    const have = required.filter((r) => !missing.includes(r)).map((r) => r.field);
    warnings.push(
      `channels.${name}: ${have.join(", ")} set but ${missing.map((r) => `${r.field} (${r.variable})`).join(", ")} ` +
        `missing, so ${name} stays off`,
    );
  }
  return false;
}

/**
 * Decides which channels of `registry` run and applies each running channel's own rules (its
 * `issues` and `warnings`). A `fallback` channel (the web chat) with `enabled` absent runs when no
 * other channel does.
 */
function decideChannels(
  c: Record<string, Record<string, unknown> & { enabled?: boolean }>,
  registry: ChannelRegistry,
  issues: ConfigIssue[],
  warnings: string[],
): ChannelsConfig {
  const resolved: Record<string, Record<string, unknown> & { enabled: boolean }> = {};
  const entries = Object.entries(registry);
  for (const [name, definition] of entries) {
    if (definition.fallback) continue;
    const slice = c[name] ?? {};
    const requirements = definition.requires?.(slice) ?? [];
    resolved[name] = { ...slice, enabled: decide(name, slice.enabled, requirements, issues, warnings) };
  }
  const anyOn = Object.values(resolved).some((slice) => slice.enabled);
  for (const [name, definition] of entries) {
    if (!definition.fallback) continue;
    const slice = c[name] ?? {};
    resolved[name] = { ...slice, enabled: slice.enabled ?? !anyOn };
  }
  for (const [name, definition] of entries) {
    const slice = resolved[name];
    if (!slice?.enabled) continue;
    for (const i of definition.issues?.(slice) ?? [])
      issues.push({ path: `channels.${name}.${i.field}`, message: i.message });
    for (const w of definition.warnings?.(slice) ?? [])
      warnings.push(`channels.${name}.${w.field}: ${w.message}`);
  }
  // Keys in the registry's order, as the schema lists them.
  return Object.fromEntries(entries.map(([name]) => [name, resolved[name]])) as unknown as ChannelsConfig;
}

function absolute(baseDir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(baseDir, p);
}

/**
 * Applies cross-field rules to a schema-valid config and resolves it. `baseDir` is the config
 * file's directory (the working directory when there is no file); relative paths resolve against it.
 * `registry`: the channels the config may have (default the built-in ones). `references`: the
 * variables each field read (`substituteEnv`), for the credential rules.
 */
export function resolveConfig(
  v: ValidatedConfig,
  baseDir: string,
  registry: ChannelRegistry = BUILT_IN_CHANNELS,
  references: readonly VariableReference[] = [],
): ResolveResult {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const channels = decideChannels(
    v.channels as unknown as Record<string, Record<string, unknown>>,
    registry,
    issues,
    warnings,
  );

  if (!isLoopbackHost(v.http.host) && !v.http.token) {
    issues.push({
      path: "http.token",
      message:
        `is required when http.host is "${v.http.host}" (not loopback): anyone on the network could use the ` +
        `agent. Set SWITCHBOARD_HTTP_TOKEN (or http.token: \${VAR}, http.tokenFile), or bind 127.0.0.1`,
    });
  }

  const redisProblem = v.runtime.redisUrl ? redisUrlProblem(v.runtime.redisUrl) : undefined;
  if (redisProblem) issues.push({ path: "runtime.redisUrl", message: redisProblem });
  issues.push(...redisIssues(v.runtime, warnings));

  v.approval.bashPatterns.forEach((pattern, i) => {
    try {
      new RegExp(pattern);
    } catch (err) {
      issues.push({
        path: joinPath(["approval", "bashPatterns", i]),
        message: `is not a valid regular expression (${(err as Error).message})`,
      });
    }
  });

  // Every chat user can read what tool processes get: never a variable the config reads a
  // credential or header from, whatever its name.
  const credentials = credentialVariables(
    references,
    v.models.custom.map((m) => m.apiKeyEnv),
  );
  v.tools.sandbox.env.forEach((name, i) => {
    const feeds = credentials.get(name);
    if (feeds !== undefined) {
      issues.push({
        path: joinPath(["tools", "sandbox", "env", i]),
        message:
          `is ${name}, which holds one of Switchboard's own credentials (it feeds ${feeds}); tool processes ` +
          "must not see it, since every chat user can read what they get. Remove it from tools.sandbox.env",
      });
    }
  });

  issues.push(...mcpIssues(v.tools.mcp.servers, Object.keys(registry)));
  issues.push(...scheduleIssues(v.schedules, Object.keys(registry), Date.now()));
  issues.push(...budgetIssues(v.budgets));

  const seen = new Map<string, number>();
  v.models.custom.forEach((m, i) => {
    const key = `${m.provider}/${m.id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({
        path: joinPath(["models", "custom", i]),
        message: `repeats the model "${key}" of models.custom[${first}]`,
      });
    } else seen.set(key, i);
  });

  const config: SwitchboardConfig = {
    ...v,
    credentialVariables: Object.fromEntries(credentials),
    channels,
    agent: { ...v.agent, workspaceDir: absolute(baseDir, v.agent.workspaceDir) },
    runtime: { ...v.runtime, dataDir: absolute(baseDir, v.runtime.dataDir) },
    schedules: { ...v.schedules, timeZone: canonicalTimeZone(v.schedules.timeZone) ?? v.schedules.timeZone },
    budgets: { ...v.budgets, timeZone: canonicalTimeZone(v.budgets.timeZone) ?? v.budgets.timeZone },
    extensions: {
      modules: v.extensions.modules.map((m) =>
        m.startsWith(".") || isAbsolute(m) ? absolute(baseDir, m) : m,
      ),
    },
  };
  return { config, issues, warnings };
}
