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

/** The editor schema: plain JSON (draft-07), with defaulted fields optional. */
export function buildEditorSchema(): JsonObject {
  const plain = JSON.parse(JSON.stringify(ConfigSchema)) as JsonObject;
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    $comment: "Generated from src/gateway/config/schema.ts by scripts/gen-config-schema.ts; do not edit.",
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${ENV_VAR} syntax
      "Switchboard configuration (switchboard.yaml). Secrets are ${ENV_VAR} references or …File paths, never literals.",
    ...(relaxDefaults(plain) as JsonObject),
  };
}
