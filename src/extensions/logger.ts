/**
 * Logging helpers of the extension layer: a console logger for when none is injected, and the one
 * silent logger re-exported for extension authors.
 */
import type { StructuredLogger } from "../agent/logger.js";

/** An error under `err` keeps its message and code on the console line (its stack would be noise). */
function errorFields(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { type: value.name, message: value.message, ...(code !== undefined ? { code } : {}) };
}

function line(level: string, obj: object, msg?: string): string {
  const fields = Object.keys(obj).length > 0 ? ` ${JSON.stringify(obj, errorFields)}` : "";
  return `extensions ${level}: ${msg ?? ""}${fields}`;
}

/** Writes warnings and errors to stderr; debug and info are dropped. */
export const consoleLogger: StructuredLogger = {
  debug() {},
  info() {},
  warn(obj, msg) {
    console.warn(line("warn", obj, msg));
  },
  error(obj, msg) {
    console.error(line("error", obj, msg));
  },
};

/** The one logger that drops everything (src/agent/logger.ts), for extension authors. */
export { silentLogger } from "../agent/logger.js";
