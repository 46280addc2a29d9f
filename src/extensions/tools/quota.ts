/**
 * The workspace disk quota (`tools.sandbox.limits.workspaceMb`): how much disk one thread's
 * workspace may use, with or without a sandbox. No filesystem quota is needed (project quotas need
 * root and a filesystem that has them); the tools enforce it instead:
 *
 * - `write` and `edit` refuse content that would take the workspace past the quota (exact);
 * - a `bash` call runs with a file size limit of what the quota leaves (no single file can pass it;
 *   at the quota, every write fails with "File size limit exceeded", while deleting still works), is
 *   watched while it runs (`QuotaWatch`: a call that passes the quota with several files is stopped
 *   within a few seconds), and its result says when the workspace is over the quota afterwards.
 *
 * Usage counts allocated blocks, as `du` does (a sparse file costs what it holds), each hard-linked
 * file once; symlinks are not followed.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);
const MB = 1024 * 1024;

/**
 * A directory's disk usage in bytes, from `du -sxB1` (allocated blocks; hard links once; symlinks
 * not followed; one filesystem). du walks 36 000 files in about 0.2 s where a walk in JavaScript
 * took 3 s. Files du may not read count as nothing.
 */
export async function diskUsage(dir: string): Promise<number> {
  try {
    const { stdout } = await run("du", ["-sxB1", "--", dir], { timeout: 60_000 });
    return Number.parseInt(stdout, 10) || 0;
  } catch (e) {
    // du exits 1 when it could not read some entries; what it printed still counts.
    const out = (e as { stdout?: string }).stdout ?? "";
    return Number.parseInt(out, 10) || 0;
  }
}

/** `bytes` as MB with one decimal, for messages. */
function megabytes(bytes: number): string {
  return `${(bytes / MB).toFixed(1)} MB`;
}

/** A workspace's standing against its quota. */
export interface QuotaStanding {
  usedBytes: number;
  limitBytes: number;
  /** What is left, never below 0. */
  freeBytes: number;
}

/** The quota of every thread's workspace. */
export class WorkspaceQuota {
  readonly limitBytes: number;

  constructor(readonly limitMb: number) {
    this.limitBytes = limitMb * MB;
  }

  async standing(workspace: string): Promise<QuotaStanding> {
    const usedBytes = await diskUsage(workspace);
    return { usedBytes, limitBytes: this.limitBytes, freeBytes: Math.max(0, this.limitBytes - usedBytes) };
  }

  /** What the model is told when the workspace is full: the numbers, the setting, what to do. */
  fullMessage(s: QuotaStanding): string {
    return (
      `The workspace uses ${megabytes(s.usedBytes)} of its ${this.limitMb} MB quota ` +
      "(tools.sandbox.limits.workspaceMb), so writes are refused; delete files you no longer need " +
      "(in a command of its own: a command's file size limit is set when it starts), then write again."
    );
  }

  /**
   * Throws (a message for the model) when writing `newBytes` in place of a file of `oldBytes` would
   * take the workspace past the quota.
   */
  async checkWrite(workspace: string, newBytes: number, oldBytes: number, shown: string): Promise<void> {
    const s = await this.standing(workspace);
    const after = s.usedBytes - oldBytes + newBytes;
    if (after <= this.limitBytes) return;
    throw new Error(
      `Not written: ${shown} (${megabytes(newBytes)}) would take the workspace to ${megabytes(after)}, ` +
        `past its ${this.limitMb} MB quota (tools.sandbox.limits.workspaceMb). Delete files you no longer need first.`,
    );
  }
}

/**
 * Watches a workspace while a command runs and calls `onExceeded` once when its usage passes the
 * quota. It measures again after a pause of ten times the last measurement (at least `minIntervalMs`),
 * so a large workspace costs little. `stop` ends it.
 */
export class QuotaWatch {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly quota: WorkspaceQuota,
    private readonly workspace: string,
    private readonly onExceeded: (s: QuotaStanding) => void,
    private readonly minIntervalMs = 2000,
  ) {
    this.schedule(minIntervalMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.measure(), ms);
    this.timer.unref();
  }

  private async measure(): Promise<void> {
    const started = performance.now();
    const s = await this.quota.standing(this.workspace).catch(() => undefined);
    if (this.stopped) return;
    if (s && s.usedBytes > s.limitBytes) {
      this.stopped = true;
      this.onExceeded(s);
      return;
    }
    this.schedule(Math.max(this.minIntervalMs, 10 * (performance.now() - started)));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
