/**
 * Logs: pino JSON lines, one logger per process, a child per thread and run so every line of a run
 * carries `threadKey` and `runId`.
 *
 * Secrets never reach the output. Three layers, because each alone misses something:
 * 1. fields named like secrets (`token`, `apiKey`, `authorization`, `cookie`, …) are replaced at any
 *    depth of the logged object, and string fields so named also in child bindings (pino serializes
 *    those once, at `child()`, so they are scrubbed in the written line);
 * 2. values shaped like known credentials (Slack `xoxb-`/`xapp-`, `sk-…` API keys, Telegram
 *    `123456:ABC…`, Discord bot tokens, GitHub tokens, `Bearer …`/`Bot …` headers, URL passwords)
 *    are masked in the final line, messages and stack traces included, by the same scrubber chat
 *    output goes through (src/agent/llm/redact.ts);
 * 3. the exact secret values of the running config (`collectSecretValues`) are masked too.
 */
import pino, { type DestinationStream, type Logger as PinoLogger } from "pino";
import { REDACTED, redactSecrets } from "../agent/llm/redact.js";
import { isSecretFieldName } from "./config/secret-names.js";
import type { LoggingConfig } from "./config/types.js";

/** The logger type every module receives (pino; it fits `StructuredLogger`, src/agent/logger.ts). */
export type Logger = PinoLogger;

/** The one scrubber (src/agent/llm/redact.ts), re-exported for the gateway's modules. */
export { REDACTED, redactSecrets } from "../agent/llm/redact.js";

/** `"botToken":"…"` in a serialized line: secret-named keys at any depth, child bindings included. */
const SECRET_JSON_FIELD =
  /("[^"]*?(?:token|secret|password|passwd|api[-_]?key|private[-_]?key|credentials?|authorization|cookie)":)"(?:[^"\\]|\\.)*"/gi;

/** Copy of `value` with secret-named fields replaced, at any depth (plain objects and arrays only). */
function redactFields(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactFields(v, seen, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // Errors, Dates, Buffers: scrubbed as text
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      isSecretFieldName(k) && v !== undefined && v !== null && v !== ""
        ? REDACTED
        : redactFields(v, seen, depth + 1);
  }
  return out;
}

export interface CreateLoggerOptions {
  level?: LoggingConfig["level"];
  /** Exact secret values to mask wherever they appear (`collectSecretValues(config)`). */
  secrets?: readonly string[];
  /** Where lines go: a stream (tests), or a file descriptor (1 stdout, the default; 2 stderr). */
  destination?: DestinationStream | 1 | 2;
  /** Fields on every line, e.g. `{ role: "worker" }`. */
  base?: Record<string, unknown>;
}

/**
 * The process logger. JSON lines with `time`, `level` (as a label), `msg`, and the redaction
 * described above; `base` fields on every line (no pid/hostname noise unless given).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const secrets = [...(options.secrets ?? [])].sort((a, b) => b.length - a.length);
  let destination: DestinationStream;
  if (typeof options.destination === "number" || options.destination === undefined) {
    const fd = pino.destination({ fd: options.destination ?? 1, sync: false });
    // `switchboard start | head`: once the reader is gone, lines are dropped, the process runs on.
    fd.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
    destination = fd;
  } else destination = options.destination;
  return pino(
    {
      level: options.level ?? "info",
      base: options.base ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => redactFields(obj, new WeakSet(), 0) as Record<string, unknown>,
      },
      hooks: {
        streamWrite: (line) =>
          redactSecrets(line, secrets).replace(SECRET_JSON_FIELD, (_m, key: string) => `${key}"${REDACTED}"`),
      },
    },
    destination,
  );
}

/** What identifies the work a log line belongs to. */
export interface ThreadLogContext {
  threadKey: string;
  runId?: string;
  /** Other stable fields (platform, role, workerId). */
  [field: string]: unknown;
}

/** A child of `logger` whose every line carries `threadKey` (and `runId` when given). */
export function threadLogger(logger: Logger, context: ThreadLogContext): Logger {
  return logger.child(context);
}

/** A child of a thread logger for one run: adds `runId` to every line. */
export function runLogger(logger: Logger, runId: string): Logger {
  return logger.child({ runId });
}

/**
 * A process logger that writes nothing (tests, commands that run without one). It is the engine's
 * `silentLogger` where a pino `Logger` (with `child`) is asked for rather than a `StructuredLogger`.
 */
export function silentProcessLogger(): Logger {
  return pino({ level: "silent" });
}
