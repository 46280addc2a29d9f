/**
 * Secrets in the config: they come from the environment (`${ENV_VAR}`, or a well-known variable when
 * the field is absent) or from files (`botTokenFile: /run/secrets/telegram`), never as literals in
 * the file, which may be committed or shared. Secret fields are recognised by name, so fields added
 * later (or in extension sections) are covered without a list to keep in sync.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { BUILT_IN_CHANNELS, type ChannelRegistry } from "../../adapters/registry.js";
import type { Env, VariableReference } from "./env.js";
import { isOnlyReferences } from "./env.js";
import { type ConfigIssue, joinPath } from "./errors.js";
import { isSecretFieldName } from "./secret-names.js";

/** The scheme word of an HTTP Authorization header value (`Bearer ${TOKEN}`). */
const AUTH_SCHEME_PREFIX = /^(Bearer|Basic|Bot|Token) (?=\$\{)/i;

/** A URL with a password in it (`redis://:pw@host`), written out literally. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i;

function envHint(path: string, field: string): string {
  const known = ENV_DEFAULTS[path];
  if (known) return `${field}: \${${known}}`;
  const name = path
    .replace(/\[\d+\]/g, "")
    .split(".")
    .slice(-2)
    .join("_")
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9_]/g, "_")
    .toUpperCase();
  return `${field}: \${${name}}`;
}

/**
 * Issues for secrets written literally in the parsed (not yet substituted) file: a secret-named
 * field whose value is anything but `${VAR}` references (an empty string is allowed and means
 * unset; a reference with a default, `${VAR:-abc}`, is refused since the default is a literal), and
 * URLs carrying a literal password. Refused secret fields are removed from `tree`, so the value
 * travels no further.
 */
export function findLiteralSecrets(tree: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        visit(item, [...path, i]);
      });
      return;
    }
    if (node === null || typeof node !== "object") {
      if (typeof node === "string" && URL_WITH_PASSWORD.test(node)) {
        issues.push({
          path: joinPath(path),
          message:
            "contains a password written in the file; put the whole URL in an environment variable " +
            `and write \${${ENV_DEFAULTS[joinPath(path)] ?? "VAR_NAME"}}`,
        });
      }
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const here = [...path, key];
      if (isSecretFieldName(key) && value !== null && typeof value !== "object") {
        const text = String(value);
        // An HTTP auth scheme before the reference is not a secret: `Authorization: Bearer ${TOKEN}`.
        const reference = text.replace(AUTH_SCHEME_PREFIX, "");
        const onlyPlainReferences =
          typeof value === "string" && isOnlyReferences(reference) && !/\$\{[^}]*:-[^}]+\}/.test(text);
        if (text !== "" && !onlyPlainReferences) {
          issues.push({
            path: joinPath(here),
            message:
              `secrets are not accepted as literal values in the config file; use an environment variable ` +
              `(${envHint(joinPath(here), key)}) or a file (${key}File: /path/to/secret)`,
          });
          delete (node as Record<string, unknown>)[key];
        }
        continue;
      }
      visit(value, here);
    }
  };
  visit(tree, []);
  return issues;
}

/** The environment defaults the channels of `registry` declare, as config paths. */
function channelEnvDefaults(registry: ChannelRegistry): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, definition] of Object.entries(registry))
    for (const [field, variable] of Object.entries(definition.env ?? {}))
      out[`channels.${name}.${field}`] = variable;
  return out;
}

const RUNTIME_ENV_DEFAULTS: Readonly<Record<string, string>> = {
  "runtime.redisUrl": "REDIS_URL",
  "runtime.redisCluster": "REDIS_CLUSTER",
  "http.token": "SWITCHBOARD_HTTP_TOKEN",
};

/**
 * Where an absent secret (or other env-backed field) is taken from: config path → variable. The
 * channels' entries come from their definitions (`env`).
 */
const ENV_DEFAULTS: Readonly<Record<string, string>> = {
  ...channelEnvDefaults(BUILT_IN_CHANNELS),
  ...RUNTIME_ENV_DEFAULTS,
};

function objectAt(tree: Record<string, unknown>, segments: readonly string[]): Record<string, unknown> {
  let node = tree;
  for (const s of segments) {
    const next = node[s];
    if (next === undefined || next === null) {
      const created: Record<string, unknown> = {};
      node[s] = created;
      node = created;
    } else if (typeof next === "object" && !Array.isArray(next)) node = next as Record<string, unknown>;
    else return {}; // wrong type: validation reports it; nothing to fill
  }
  return node;
}

/**
 * Fills each `ENV_DEFAULTS` field (those of `registry`'s channels) that the file leaves out (and has no `…File` for) from its
 * environment variable, when that is set and not empty.
 */
export function applyEnvDefaults(
  tree: Record<string, unknown>,
  env: Env,
  registry: ChannelRegistry = BUILT_IN_CHANNELS,
): void {
  const defaults =
    registry === BUILT_IN_CHANNELS
      ? ENV_DEFAULTS
      : { ...channelEnvDefaults(registry), ...RUNTIME_ENV_DEFAULTS };
  for (const [path, variable] of Object.entries(defaults)) {
    const value = env[variable];
    if (value === undefined || value === "") continue;
    const segments = path.split(".");
    const field = segments.pop() as string;
    const parent = objectAt(tree, segments);
    if (parent[field] === undefined && parent[`${field}File`] === undefined) parent[field] = value;
  }
}

/** Fields read from a `…File` sibling besides secrets. */
const FILE_BACKED = new Set(["systemPrompt"]);

/**
 * Reads every `<field>File` whose `<field>` is a secret (or `systemPrompt`) into `<field>`, with
 * paths relative to `baseDir`. Setting both is an issue; so is a file that cannot be read.
 */
export function readFileFields(tree: unknown, baseDir: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        visit(item, [...path, i]);
      });
      return;
    }
    const obj = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(obj)) {
      const base = key.endsWith("File") ? key.slice(0, -4) : "";
      if (!base || !(isSecretFieldName(base) || FILE_BACKED.has(base)) || typeof value !== "string") {
        visit(value, [...path, key]);
        continue;
      }
      if (obj[base] !== undefined) {
        issues.push({ path: joinPath([...path, key]), message: `set either ${base} or ${key}, not both` });
        continue;
      }
      const file = isAbsolute(value) ? value : resolve(baseDir, value);
      try {
        obj[base] = readFileSync(file, "utf8").replace(/\r?\n$/, "");
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
        issues.push({ path: joinPath([...path, key]), message: `cannot read file "${file}" (${code})` });
      }
    }
  };
  visit(tree, []);
  return issues;
}

/** The variables every deployment reads provider keys from (besides `apiKeyEnv` of custom models). */
const PROVIDER_KEY_VARIABLES = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];

/**
 * Whether a field at `segments` holds a credential or may carry one: a secret-named field, any
 * header value, a URL (Redis URLs carry passwords), any variable given to an MCP server.
 */
function isCredentialField(segments: readonly (string | number)[]): boolean {
  const last = [...segments].reverse().find((s): s is string => typeof s === "string");
  if (last === undefined) return false;
  const mcpEnv = segments[0] === "tools" && segments[1] === "mcp" && segments.includes("env");
  return (
    isSecretFieldName(last) ||
    segments.includes("headers") ||
    /url$/i.test(last) ||
    last === "redisCluster" ||
    mcpEnv
  );
}

/**
 * The variables the config reads credentials from, each with the field it feeds: the `${VAR}`
 * references of credential fields (`isCredentialField`), the variables that fill absent secrets by
 * default (`ENV_DEFAULTS`), the providers' key variables and every custom model's `apiKeyEnv`.
 * Tool processes must never get these (`tools.sandbox.env` is refused for them).
 */
export function credentialVariables(
  references: readonly VariableReference[],
  customApiKeyEnv: readonly (string | undefined)[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of references)
    if (isCredentialField(r.segments) && !out.has(r.variable)) out.set(r.variable, r.path);
  for (const [path, variable] of Object.entries(ENV_DEFAULTS))
    if (!out.has(variable)) out.set(variable, path);
  for (const variable of PROVIDER_KEY_VARIABLES)
    if (!out.has(variable)) out.set(variable, "the provider's API key");
  customApiKeyEnv.forEach((variable, i) => {
    if (variable && !out.has(variable)) out.set(variable, `models.custom[${i}].apiKeyEnv`);
  });
  return out;
}

/**
 * Every secret value of a resolved config, for the one redactor (logs, chat, tool output): secret-
 * named fields and URL passwords of any length, and the values of the variables the config reads
 * credentials from (`config.credentialVariables`) as `env` holds them. Short values are masked as
 * whole words only (see `redactSecrets`).
 */
export function collectSecretValues(
  config: { credentialVariables?: Readonly<Record<string, string>> } & object,
  env: Env = process.env,
): string[] {
  const found = new Set<string>();
  for (const variable of Object.keys(config.credentialVariables ?? {})) {
    const value = env[variable];
    if (value) found.add(value);
  }
  const visit = (node: unknown, key: string | undefined): void => {
    if (typeof node === "string") {
      if (key !== undefined && isSecretFieldName(key) && node.length > 0) found.add(node);
      const m = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:([^/\s@]+)@/i.exec(node);
      if (m?.[1]) {
        found.add(m[1]);
        try {
          found.add(decodeURIComponent(m[1]));
        } catch {
          // not percent-encoded after all: the raw form is masked
        }
      }
      return;
    }
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) for (const item of node) visit(item, undefined);
    else for (const [k, v] of Object.entries(node)) visit(v, k);
  };
  // Its keys are variable names and its values field paths: neither is a secret.
  const { credentialVariables: _names, ...sections } = config;
  visit(sections, undefined);
  return [...found];
}
