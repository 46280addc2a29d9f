/**
 * The JSON Schema editors use for completion and inline checks of `switchboard.yaml`, generated from
 * the TypeBox schema by `scripts/gen-config-schema.ts` into `config/switchboard.schema.json`
 * (a test keeps the committed file up to date).
 */
import { ConfigSchema } from "./schema.js";

type JsonObject = { [key: string]: unknown };

/** Drops properties that have a default from `required`: a file may leave them out. */
function relaxDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(relaxDefaults);
  if (node === null || typeof node !== "object") return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = relaxDefaults(v);
  const props = out.properties as Record<string, JsonObject> | undefined;
  if (Array.isArray(out.required) && props) {
    const required = (out.required as string[]).filter((name) => props[name]?.default === undefined);
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  return out;
}

/** A `${VAR}` or `${VAR:-default}` reference, which the loader resolves before validating. */
const ENV_REFERENCE = { type: "string", pattern: "\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}" };

/**
 * Lets scalar fields that a plain string would fail (numbers, booleans, enums, patterns) also hold
 * an env reference, so editors do not flag `port: ${PORT:-8787}`.
 */
function allowEnvReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowEnvReferences);
  if (node === null || typeof node !== "object") return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = allowEnvReferences(v);
  const strict =
    out.type === "integer" ||
    out.type === "number" ||
    out.type === "boolean" ||
    (out.type === "string" && (out.pattern !== undefined || out.enum !== undefined));
  if (!strict) return out;
  const { description, default: fallback, title, ...rest } = out;
  const wrapped: JsonObject = { anyOf: [rest, ENV_REFERENCE] };
  if (title !== undefined) wrapped.title = title;
  if (description !== undefined) wrapped.description = description;
  if (fallback !== undefined) wrapped.default = fallback;
  return wrapped;
}

/** The editor schema: plain JSON (draft-07), defaulted fields optional, env references accepted. */
export function buildEditorSchema(): JsonObject {
  const plain = JSON.parse(JSON.stringify(ConfigSchema)) as JsonObject;
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    $comment: "Generated from src/gateway/config/schema.ts by scripts/gen-config-schema.ts; do not edit.",
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${ENV_VAR} syntax
      "Switchboard configuration (switchboard.yaml). Secrets are ${ENV_VAR} references or …File paths, never literals.",
    ...(allowEnvReferences(relaxDefaults(plain)) as JsonObject),
  };
}
