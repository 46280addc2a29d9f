/**
 * Schema validation with AJV: fills defaults, coerces `${VAR}` strings to the numbers and booleans
 * the schema expects (`port: ${PORT:-8787}`), and turns AJV's errors into one `ConfigIssue` per
 * problem with the field's path and what was expected.
 *
 * Compiling the schema takes AJV about 0.2 s, a large part of a start. The build (scripts/build.js)
 * therefore writes the compiled validator beside this module as plain JavaScript
 * (`precompiledValidatorSource`), and the compiled program loads that; run from the TypeScript
 * sources (tests, `npm run dev`) it compiles on first use. Both come from the same schema and options.
 */
import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { ChannelRegistry } from "../../adapters/registry.js";
import { BUILT_IN_CHANNELS } from "../../adapters/registry.js";
import { redactSecrets } from "../log.js";
import { type ConfigIssue, closest, joinPath } from "./errors.js";
import { ConfigSchema, configSchema, type ValidatedConfig } from "./schema.js";
import { isSecretFieldName } from "./secret-names.js";

/**
 * File name of the precompiled validator the build writes next to the compiled validate.js.
 * @public scripts/build.js reads it from the compiled module, which knip does not follow.
 */
export const PRECOMPILED_VALIDATOR_FILE = "config-validator.generated.cjs";

const AJV_OPTIONS = { allErrors: true, useDefaults: true, coerceTypes: true, verbose: true } as const;

// AJV is CommonJS; loaded synchronously and only when the validator must be compiled here.
const require = createRequire(import.meta.url);
type AjvModule = typeof import("ajv");

let compiled: ValidateFunction<ValidatedConfig> | undefined;

function precompiled(): ValidateFunction<ValidatedConfig> | undefined {
  try {
    return require(`./${PRECOMPILED_VALIDATOR_FILE}`) as ValidateFunction<ValidatedConfig>;
  } catch (err) {
    // Running from the sources: nothing was built. Anything else is a broken build; say so.
    const missing = (err as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND";
    if (missing && String((err as Error).message).includes(PRECOMPILED_VALIDATOR_FILE)) return undefined;
    throw err;
  }
}

/** Validators of registries other than the built-in one (a test's, with a platform of its own). */
const others = new WeakMap<ChannelRegistry, ValidateFunction<ValidatedConfig>>();

function validator(registry: ChannelRegistry): ValidateFunction<ValidatedConfig> {
  if (registry !== BUILT_IN_CHANNELS) {
    let v = others.get(registry);
    if (!v) {
      v = new (require("ajv") as AjvModule).Ajv(AJV_OPTIONS).compile<ValidatedConfig>(configSchema(registry));
      others.set(registry, v);
    }
    return v;
  }
  compiled ??=
    precompiled() ??
    new (require("ajv") as AjvModule).Ajv(AJV_OPTIONS).compile<ValidatedConfig>(ConfigSchema);
  return compiled;
}

/**
 * The config validator as a standalone CommonJS module (for the build to write into dist/).
 * @public scripts/build.js calls it on the compiled module, which knip does not follow.
 */
export function precompiledValidatorSource(): string {
  const { Ajv } = require("ajv") as AjvModule;
  const standaloneCode =
    require("ajv/dist/standalone") as typeof import("ajv/dist/standalone/index.js").default;
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
  return standaloneCode(ajv, ajv.compile(ConfigSchema));
}

function pathSegments(instancePath: string): (string | number)[] {
  if (instancePath === "") return [];
  return instancePath
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** A short rendering of a bad value for "(got …)"; nothing for secret fields. */
function shown(value: unknown, field: string | number | undefined): string {
  if (typeof field === "string" && isSecretFieldName(field)) return "";
  let text: string;
  if (value === null) text = "null (empty value)";
  else if (Array.isArray(value)) text = "a list";
  else if (typeof value === "object") text = "a mapping";
  else text = JSON.stringify(value) ?? String(value);
  if (text.length > 60) text = `${text.slice(0, 57)}...`;
  return ` (got ${redactSecrets(text)})`;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  object: "a mapping (key: value lines)",
  array: "a list",
};

function describe(e: ErrorObject): ConfigIssue {
  const segments = pathSegments(e.instancePath);
  const field = segments.at(-1);
  const parent = e.parentSchema as { title?: string; properties?: Record<string, unknown> } | undefined;
  const at = (extra?: string | number) => joinPath(extra === undefined ? segments : [...segments, extra]);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return { path: at(String(p.missingProperty)), message: "is required" };
    case "additionalProperties": {
      const name = String(p.additionalProperty);
      const known = Object.keys(parent?.properties ?? {});
      const guess = closest(name, known);
      const hint = guess ? `did you mean "${guess}"?` : `known fields: ${known.join(", ")}`;
      return { path: at(name), message: `unknown field; ${hint}` };
    }
    case "enum": {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
      return { path: at(), message: `must be one of ${allowed}${shown(e.data, field)}` };
    }
    case "type": {
      const expected = String(p.type)
        .split(",")
        .map((t) => TYPE_NAMES[t] ?? t)
        .join(" or ");
      return { path: at(), message: `must be ${expected}${shown(e.data, field)}` };
    }
    case "pattern":
      return {
        path: at(),
        message: `must be ${parent?.title ?? `a string matching /${String(p.pattern)}/`}${shown(e.data, field)}`,
      };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return {
        path: at(),
        message: `must be ${String(p.comparison)} ${String(p.limit)}${shown(e.data, field)}`,
      };
    case "minLength":
      return {
        path: at(),
        message: p.limit === 1 ? "must not be empty" : `must have at least ${String(p.limit)} characters`,
      };
    default:
      return { path: at(), message: e.message ?? `fails ${e.keyword}` };
  }
}

export type ValidationResult = { ok: true; config: ValidatedConfig } | { ok: false; issues: ConfigIssue[] };

/**
 * Validates `tree` against the schema (with `registry`'s channels), filling defaults and coercing types in place. On failure,
 * one issue per problem, in document order of the paths AJV reports.
 */
export function validateConfigTree(
  tree: unknown,
  registry: ChannelRegistry = BUILT_IN_CHANNELS,
): ValidationResult {
  const validate = validator(registry);
  if (validate(tree)) return { ok: true, config: tree };
  const seen = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const e of validate.errors ?? []) {
    const issue = describe(e);
    const key = `${issue.path}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return { ok: false, issues };
}
