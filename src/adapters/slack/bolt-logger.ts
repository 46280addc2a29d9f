/**
 * Bolt's `Logger` interface on top of the adapter's structured logger. Bolt logs variadic values;
 * they are joined into the message (objects as their message or JSON), and an `Error` among them
 * also goes under `err` as the object. Bolt and web-api redact tokens from what they log.
 */
import { LogLevel } from "@slack/bolt";
import { errorMessage } from "../../agent/errors.js";
import type { StructuredLogger } from "../../agent/logger.js";

const ORDER = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR];

export class BoltLogger {
  private level: LogLevel = LogLevel.INFO;
  private name = "slack";

  constructor(private readonly log: StructuredLogger) {}

  private on(level: LogLevel): boolean {
    return ORDER.indexOf(level) >= ORDER.indexOf(this.level);
  }

  private text(msg: unknown[]): string {
    return msg.map((m) => (typeof m === "string" ? m : errorMessage(m))).join(" ");
  }

  /** The line's fields: the component, and the first error Bolt passed as the object itself. */
  private fields(msg: unknown[]): object {
    const err = msg.find((m) => m instanceof Error);
    return err ? { component: this.name, err } : { component: this.name };
  }

  debug(...msg: unknown[]): void {
    if (this.on(LogLevel.DEBUG)) this.log.debug(this.fields(msg), this.text(msg));
  }
  info(...msg: unknown[]): void {
    if (this.on(LogLevel.INFO)) this.log.info(this.fields(msg), this.text(msg));
  }
  warn(...msg: unknown[]): void {
    if (this.on(LogLevel.WARN)) this.log.warn(this.fields(msg), this.text(msg));
  }
  error(...msg: unknown[]): void {
    if (this.on(LogLevel.ERROR)) this.log.error(this.fields(msg), this.text(msg));
  }
  setLevel(level: LogLevel): void {
    this.level = level;
  }
  getLevel(): LogLevel {
    return this.level;
  }
  setName(name: string): void {
    this.name = name;
  }
}
