/**
 * The one structured logger interface of every layer, and the one logger that drops everything.
 * It is pino's call shape (fields first, then an optional message), so the gateway's process
 * logger (pino, src/gateway/log.ts) is passed wherever a `StructuredLogger` is asked for; it lives
 * in the engine because every layer may import the engine's basics.
 */

/** Structured logger (a pino-compatible subset). An error goes under `err` as the object itself. */
export interface StructuredLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A logger that drops everything: the default where no logger is injected, and tests. */
export const silentLogger: StructuredLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
