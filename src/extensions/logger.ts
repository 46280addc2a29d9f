/**
 * Logging helpers of the extension layer: a console logger for when none is injected, and the short
 * one-line text of an error that reports and chat notices use (no stack traces).
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

/** The first line of an error's message, at most 300 characters. */
export function errorText(error: unknown): string {
  const raw = error instanceof Error ? error.message : typeof error === "string" ? error : String(error);
  const first = raw.split("\n", 1)[0] ?? "";
  return first.length > 300 ? `${first.slice(0, 297)}...` : first || "unknown error";
}
