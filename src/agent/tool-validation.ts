import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { errorMessage } from "./errors.js";
import type { Tool, ToolCall } from "./llm/types.js";

// Created on the first tool call, not at import: AJV is ~9 MB resident, and a process that has
// not run a tool yet (a gateway, a worker just started) need not hold it. AJV is CommonJS, so a
// synchronous require keeps validation synchronous.
// Coercion turns the strings models often send ("5", "true") into the declared types;
// `strict: false` accepts schemas from extensions that carry extra keywords.
let ajv: Ajv | undefined;
function theAjv(): Ajv {
  if (!ajv) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
    ajv = new AjvClass({ coerceTypes: true, allErrors: true, strict: false });
  }
  return ajv;
}
const validators = new WeakMap<object, ValidateFunction>();

const MAX_ARGUMENTS_SHOWN = 2000;

function validatorFor(tool: Tool): ValidateFunction {
  const schema = tool.parameters as object;
  let validate = validators.get(schema);
  if (!validate) {
    try {
      validate = theAjv().compile(schema);
    } catch (e) {
      const reason = errorMessage(e);
      throw new Error(
        `Tool "${tool.name}" has an invalid parameter schema (${reason}). Fix the tool's TypeBox schema.`,
      );
    }
    validators.set(schema, validate);
  }
  return validate;
}

function errorPath(error: ErrorObject): string {
  let path = error.instancePath;
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    if (missing !== undefined) path = `${path}/${missing}`;
  }
  return path === "" ? "(root)" : path;
}

function showArguments(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? String(args);
  } catch {
    text = String(args);
  }
  if (text.length <= MAX_ARGUMENTS_SHOWN) return text;
  return `${text.slice(0, MAX_ARGUMENTS_SHOWN)}… (${text.length - MAX_ARGUMENTS_SHOWN} more characters)`;
}

/**
 * Validates a tool call's arguments against the tool's TypeBox schema and returns them coerced to
 * the declared types (`"5"` → `5` for a number). Works on a copy: the assistant message is never
 * changed. Throws an `Error` whose message names every failing path with the reason and shows the
 * arguments received (truncated when huge), written for the model to correct its call. Compiled
 * validators are cached per schema object.
 */
export function validateToolArguments(tool: Tool, toolCall: ToolCall): Record<string, unknown> {
  const validate = validatorFor(tool);
  const args: unknown = structuredClone(toolCall.arguments ?? {});
  if (validate(args)) return args as Record<string, unknown>;
  const problems = (validate.errors ?? []).map((e) => `  - ${errorPath(e)}: ${e.message ?? "is invalid"}`);
  throw new Error(
    `Invalid arguments for tool "${toolCall.name}":\n${problems.join("\n")}\n` +
      `Arguments received: ${showArguments(toolCall.arguments)}`,
  );
}
