/**
 * `switchboard` as a child process (`node --import tsx src/main.ts …`), the way `npm start` runs it: output
 * collected line by line (JSON logs and the lines meant for people), waits for a line, and a
 * graceful stop with SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { until } from "./world.js";

const repo = join(import.meta.dirname, "..", "..", "..");
// tsx's loader by absolute URL: a bare `--import tsx` resolves from the child's cwd (a temp dir).
const tsxLoader = pathToFileURL(join(repo, "node_modules", "tsx", "dist", "loader.mjs")).href;
export const MAIN = join(repo, "src", "main.ts");

export interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

export class CliProcess {
  readonly lines: string[] = [];
  readonly stderr: string[] = [];
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  /**
   * Runs `node --import tsx` (never the `tsx` wrapper: its signal relay kills the child when it does
   * not confirm a SIGTERM within 30 ms, which a loaded machine misses, so a graceful stop ended 143).
   */
  constructor(args: string[], o: { cwd: string; env: Record<string, string> }) {
    this.child = spawn(process.execPath, ["--import", tsxLoader, MAIN, ...args], {
      cwd: o.cwd,
      // A clean environment: nothing (REDIS_URL, tokens) leaks in from the test runner.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? o.cwd, ...o.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const collect = (into: string[]) => {
      let rest = "";
      return (chunk: Buffer) => {
        rest += chunk.toString();
        const parts = rest.split("\n");
        rest = parts.pop() ?? "";
        into.push(...parts);
      };
    };
    this.child.stdout?.on("data", collect(this.lines));
    this.child.stderr?.on("data", collect(this.stderr));
    this.exited = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  /** The JSON log lines so far. */
  logs(): LogLine[] {
    const out: LogLine[] = [];
    for (const line of this.lines) {
      if (!line.startsWith("{")) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // a line cut by the buffer's end; the next read has it whole
      }
    }
    return out;
  }

  /** Waits for a log line with message `msg` (and the fields of `match`). */
  waitForLog(msg: string, match: Record<string, unknown> = {}, ms = 60_000): Promise<LogLine> {
    return until(
      () => this.logs().find((l) => l.msg === msg && Object.entries(match).every(([k, v]) => l[k] === v)),
      `the log line "${msg}"\n--- stdout\n${this.lines.slice(-20).join("\n")}\n--- stderr\n${this.stderr.slice(-20).join("\n")}`,
      ms,
    );
  }

  /** Waits for a plain output line matching `pattern`. */
  waitForLine(pattern: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
    return until(
      () => {
        for (const line of this.lines) {
          const m = pattern.exec(line);
          if (m) return m;
        }
        return undefined;
      },
      `a line matching ${pattern}\n--- stdout\n${this.lines.slice(-20).join("\n")}\n--- stderr\n${this.stderr.slice(-20).join("\n")}`,
      ms,
    );
  }

  /** Sends `signal` (a crash: SIGKILL reaches Switchboard itself) and waits for the exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    await this.exited;
  }

  /** SIGTERM, then the exit code (SIGKILL if it has not exited within `ms`). */
  async stop(ms = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), ms);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
