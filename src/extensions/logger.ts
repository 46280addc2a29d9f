/**
 * Logging helpers of the extension layer: a console logger for when none is injected, and the one
 * silent logger re-exported for extension authors.
 */
import type { StructuredLogger } from "../agent/logger.js";

function line(level: string, obj: object, msg?: string): string {
  const fields = Object.keys(obj).length > 0 ? ` ${JSON.stringify(obj)}` : "";
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
