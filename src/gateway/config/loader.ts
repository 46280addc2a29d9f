/**
 * Loading the config: find the file (or run on defaults without one), parse YAML, refuse literal
 * secrets, substitute `${ENV}` references, fill env-backed defaults, read `…File` fields, validate
 * against the schema and resolve. Every problem found is reported together, each with its path.
 */

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../adapters/registry.js";
import { type Env, substituteEnv, type VariableReference } from "./env.js";
import { ConfigError, type ConfigIssue } from "./errors.js";
import { type PathLocator, pathLocator, yamlSyntaxIssue } from "./locate.js";
import { splitRedisCluster } from "./redis-target.js";
import { resolveConfig } from "./resolve.js";
import type { ValidatedConfig } from "./schema.js";
import { applyEnvDefaults, findLiteralSecrets, readFileFields } from "./secrets.js";
import type { SwitchboardConfig } from "./types.js";
import { validateConfigTree } from "./validate.js";

/** `--port` / `--host` from the command line: they win over the file and `PORT`. */
export interface HttpOverrides {
  port?: number;
  host?: string;
}

export interface LoadConfigOptions {
  /** The file named on the command line (`--config`); a missing file is an issue. */
  path?: string;
  /** Variables for `${…}` and the env-backed defaults. Default: `process.env`. */
  env?: Env;
  /** Where relative paths and the default file names are looked up. Default: `process.cwd()`. */
  cwd?: string;
  /** Command-line overrides of where the HTTP server listens. */
  http?: HttpOverrides;
}

/**
 * Issues carry the line of their field in the file (`line`); `locate` finds the line of any config
 * path, for problems found later (an unknown model id at start).
 */
export type LoadConfigResult =
  | { ok: true; config: SwitchboardConfig; file: string | undefined; warnings: string[]; locate: PathLocator }
  | { ok: false; issues: ConfigIssue[]; file: string | undefined; warnings: string[]; locate: PathLocator };

const NOWHERE: PathLocator = () => undefined;

/** `issue` with the line of its path in the file, when it has a path the file contains. */
export function withLine(issue: ConfigIssue, locate: PathLocator): ConfigIssue {
  if (issue.line !== undefined || !issue.path) return issue;
  const at = locate(issue.path);
  return at ? { ...issue, line: at.line } : issue;
}

/** File names tried, in order, when neither `--config` nor `SWITCHBOARD_CONFIG` names one. */
export const DEFAULT_CONFIG_FILES = ["switchboard.yaml", "switchboard.yml", "config/switchboard.yaml"];

/**
 * The config file to load: `path`, else `$SWITCHBOARD_CONFIG`, else the first of
 * `DEFAULT_CONFIG_FILES` that exists; undefined when there is none (defaults only). An explicitly
 * named file is returned even when missing, so loading reports it.
 */
export function findConfigFile(options: LoadConfigOptions = {}): string | undefined {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const named = options.path ?? (env.SWITCHBOARD_CONFIG || undefined);
  if (named !== undefined) return resolve(cwd, named);
  for (const name of DEFAULT_CONFIG_FILES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Parses and resolves config `text` (YAML). `baseDir` anchors relative paths; `fileName` only
 * labels messages. Pure apart from reading `…File` fields.
 */
export function parseConfigText(
  text: string,
  options: {
    env?: Env;
    baseDir?: string;
    fileName?: string;
    http?: HttpOverrides;
    /** The channels the file may configure (default the built-in ones; a test adds its own). */
    channels?: ChannelRegistry;
  } = {},
): LoadConfigResult {
  const registry = options.channels ?? BUILT_IN_CHANNELS;
  const env = options.env ?? process.env;
  const baseDir = options.baseDir ?? process.cwd();
  const file = options.fileName;
  // merge: `<<: *shared` lets channels share one block of settings.
  const counter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, merge: true, lineCounter: counter });
  if (doc.errors.length > 0) {
    return { ok: false, issues: [yamlSyntaxIssue(doc.errors, text)], file, warnings: [], locate: NOWHERE };
  }
  const locate = pathLocator(doc, counter);
  const fail = (issues: ConfigIssue[], warnings: string[] = []): LoadConfigResult => ({
    ok: false,
    // In the order of the file (whole-file problems first), as people read it.
    issues: issues
      .map((i) => withLine(i, locate))
      .map((issue, order) => ({ issue, order }))
      .sort((a, b) => (a.issue.line ?? 0) - (b.issue.line ?? 0) || a.order - b.order)
      .map((x) => x.issue),
    file,
    warnings,
    locate,
  });
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail([
      { path: "", message: "the config file must be a mapping of sections (channels:, models:, …)" },
    ]);
  }
  const tree = raw as Record<string, unknown>;

  const issues: ConfigIssue[] = [...findLiteralSecrets(tree)];
  for (const key of Object.keys(tree)) if (key.startsWith("x-")) delete tree[key];
  const secretPaths = new Set(issues.map((i) => i.path));
  const substituted = substituteEnv(tree, env);
  issues.push(...substituted.issues.filter((i) => !secretPaths.has(i.path)));
  applyEnvDefaults(tree, env, registry);
  splitRedisCluster(tree);
  issues.push(...applyListenOverrides(tree, env, options.http));
  issues.push(...readFileFields(tree, baseDir));

  const validated = validateConfigTree(tree, registry);
  if (!validated.ok) {
    const reported = new Set(issues.map((i) => i.path));
    const more = validated.issues.filter((i) => !reported.has(i.path));
    for (const i of more) reported.add(i.path);
    return fail([
      ...issues,
      ...more,
      ...crossFieldIssuesOfInvalid(tree, baseDir, reported, registry, substituted.references),
    ]);
  }
  const resolved = resolveConfig(validated.config, baseDir, registry, substituted.references);
  issues.push(...resolved.issues);
  if (issues.length > 0) return fail(issues, resolved.warnings);
  return { ok: true, config: resolved.config, file, warnings: resolved.warnings, locate };
}

/**
 * Where the HTTP server listens, from outside the file: `PORT` (the convention of platforms that
 * assign the port, and the way to give two processes on one machine one config file) replaces
 * `http.port`, and the command line's `--port` / `--host` replace both.
 */
function applyListenOverrides(
  tree: Record<string, unknown>,
  env: Env,
  overrides: HttpOverrides | undefined,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  let port = overrides?.port;
  const fromEnv = env.PORT?.trim();
  if (port === undefined && fromEnv) {
    if (/^\d+$/.test(fromEnv) && Number(fromEnv) <= 65535) port = Number(fromEnv);
    else {
      issues.push({
        path: "",
        message: `the PORT environment variable is "${fromEnv}", which is not a port number (0 to 65535); fix or unset it`,
      });
    }
  }
  const host = overrides?.host;
  if (port === undefined && host === undefined) return issues;
  const current = tree.http ?? {};
  // A malformed `http:` is the schema's to report; there is nothing to override in it.
  if (current === null || typeof current !== "object" || Array.isArray(current)) return issues;
  const http = current as Record<string, unknown>;
  if (port !== undefined) http.port = port;
  if (host !== undefined) http.host = host;
  tree.http = http;
  return issues;
}

/**
 * Cross-field issues of a tree that failed schema validation, so one `check` shows them too (e.g. a
 * missing HTTP token next to a misspelled field). AJV has filled the defaults already; a tree too
 * broken for the rules to read yields nothing extra.
 */
function crossFieldIssuesOfInvalid(
  tree: unknown,
  baseDir: string,
  reported: Set<string>,
  registry: ChannelRegistry,
  references: readonly VariableReference[],
): ConfigIssue[] {
  try {
    const fields = resolveConfig(tree as ValidatedConfig, baseDir, registry, references).issues;
    return fields.filter((i) => ![...reported].some((p) => i.path === p || i.path.startsWith(`${p}.`)));
  } catch {
    return [];
  }
}

/**
 * Loads the config for this process: the file `findConfigFile` picks, or defaults alone when there
 * is none (a valid setup: embedded runtime, web chat on loopback). Never throws for bad input; the
 * result lists every issue.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadConfigResult {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = findConfigFile({ ...options, env, cwd });
  const http = options.http;
  if (file === undefined) return parseConfigText("", { env, baseDir: cwd, ...(http ? { http } : {}) });
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === "ENOENT"
        ? `config file ${file} does not exist (copy config/switchboard.example.yaml, or run without --config for defaults)`
        : `cannot read config file ${file} (${code ?? String(err)})`;
    return { ok: false, issues: [{ path: "", message }], file, warnings: [], locate: NOWHERE };
  }
  return parseConfigText(text, { env, baseDir: dirname(file), fileName: file, ...(http ? { http } : {}) });
}

/** `loadConfig`, throwing a `ConfigError` that lists every issue when the config is invalid. */
export function loadConfigOrThrow(options: LoadConfigOptions = {}): {
  config: SwitchboardConfig;
  file: string | undefined;
  warnings: string[];
} {
  const r = loadConfig(options);
  if (!r.ok) throw new ConfigError(r.issues, r.file);
  return { config: r.config, file: r.file, warnings: r.warnings };
}
