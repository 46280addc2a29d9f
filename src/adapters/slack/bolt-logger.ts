/**
 * Bolt's `Logger` interface on top of the adapter's structured logger. Bolt logs variadic strings;
 * they are joined into the message. Bolt and web-api redact tokens from what they log.
 */
import { LogLevel } from "@slack/bolt";
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
    return msg
      .map((m) => (m instanceof Error ? m.message : typeof m === "string" ? m : JSON.stringify(m)))
      .join(" ");
  }

  debug(...msg: unknown[]): void {
    if (this.on(LogLevel.DEBUG)) this.log.debug({ component: this.name }, this.text(msg));
  }
  info(...msg: unknown[]): void {
    if (this.on(LogLevel.INFO)) this.log.info({ component: this.name }, this.text(msg));
  }
  warn(...msg: unknown[]): void {
    if (this.on(LogLevel.WARN)) this.log.warn({ component: this.name }, this.text(msg));
  }
  error(...msg: unknown[]): void {
    if (this.on(LogLevel.ERROR)) this.log.error({ component: this.name }, this.text(msg));
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
