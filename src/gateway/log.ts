/**
 * Logs: pino JSON lines, one logger per process, a child per thread and run so every line of a run
 * carries `threadKey` and `runId`.
 *
 * Secrets never reach the output. Three layers, because each alone misses something:
 * 1. fields named like secrets (`token`, `apiKey`, `authorization`, `cookie`, …) are replaced at any
 *    depth of the logged object, and string fields so named also in child bindings (pino serializes
 *    those once, at `child()`, so they are scrubbed in the written line);
 * 2. values shaped like known credentials (Slack `xoxb-`/`xapp-`, `sk-…` API keys, Telegram
 *    `123456:ABC…`, Discord bot tokens, `Bearer …`/`Bot …` headers, URL passwords) are masked in
 *    the final line, messages and stack traces included;
 * 3. the exact secret values of the running config (`collectSecretValues`) are masked too.
 */
import pino, { type DestinationStream, type Logger as PinoLogger } from "pino";
import { isSecretFieldName } from "./config/secret-names.js";
import type { LoggingConfig } from "./config/types.js";

/** The logger type every module receives (structurally compatible with `AdapterLogger` and friends). */
export type Logger = PinoLogger;

export const REDACTED = "[redacted]";

const TOKEN_SHAPES: RegExp[] = [
  /\bxox[a-z]-[A-Za-z0-9-]{8,}/g, // Slack bot/user/refresh tokens
  /\bxapp-[A-Za-z0-9-]{8,}/g, // Slack app-level tokens
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI, Anthropic (sk-ant-…), most OpenAI-compatible proxies
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google API keys
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens (also inside /bot<token>/ URLs)
  /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}/g, // Discord bot tokens
];
const AUTH_SCHEME = /\b(Bearer|Bot|Basic|Token)\s+[A-Za-z0-9._~+/=:-]{8,}/g;
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@"]*:)[^/\s@"]+@/gi;

/** `"botToken":"…"` in a serialized line: secret-named keys at any depth, child bindings included. */
const SECRET_JSON_FIELD =
  /("[^"]*?(?:token|secret|password|passwd|api[-_]?key|private[-_]?key|credentials?|authorization|cookie)":)"(?:[^"\\]|\\.)*"/gi;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `text` with every credential-shaped substring and every one of `secrets` (exact values, also in
 * their JSON-escaped form) replaced by `[redacted]`. Use it for any text that leaves the process:
 * log lines, error messages shown in chat, CLI output.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    const escaped = JSON.stringify(secret).slice(1, -1);
    out = out.replace(new RegExp(escapeRegExp(secret), "g"), REDACTED);
    if (escaped !== secret) out = out.replace(new RegExp(escapeRegExp(escaped), "g"), REDACTED);
  }
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, REDACTED);
  out = out.replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  return out.replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`);
}

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
  const destination =
    typeof options.destination === "number" || options.destination === undefined
      ? pino.destination({ fd: options.destination ?? 1, sync: false })
      : options.destination;
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

/** A logger that writes nothing (tests, tools that run without a process logger). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
