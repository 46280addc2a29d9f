/**
 * The `bash` tool: runs a command in the thread's workspace through a `CommandRunner` (a
 * bubblewrap sandbox, or a plain child process where there is none) with a timeout, output capped to
 * its head and tail, progress as tool updates, and the whole process tree killed on abort or
 * timeout. The command gets an allowlisted environment (no API keys or platform tokens of the
 * gateway). A limit the command runs into is named in the error the model gets, the workspace
 * quota included (`quota.ts`).
 */
import { type Static, Type } from "@sinclair/typebox";
import type { AgentToolUpdateCallback } from "../../agent/types.js";
import type { ApprovalRule, ExtensionTool } from "../types.js";
import { HeadTailBuffer } from "./output-buffer.js";
import { QuotaWatch, WorkspaceQuota } from "./quota.js";
import { createDirectRunner } from "./sandbox/direct.js";
import { describeLimits, signalOfExitCode } from "./sandbox/limits.js";
import type { CommandRunner } from "./sandbox/types.js";

export interface BashToolOptions {
  /** How commands run. Default: a direct runner (no sandbox) with `env`. */
  runner?: CommandRunner;
  /** Default timeout. Default 120 000 ms. */
  defaultTimeoutMs?: number;
  /** Longest timeout the model may ask for. Default 600 000 ms. */
  maxTimeoutMs?: number;
  /** Output kept (head and tail). Default 50 000 bytes. */
  maxOutputBytes?: number;
  /** Extra environment variables for the default runner (the command otherwise gets PATH, LANG, HOME, TERM=dumb). */
  env?: Record<string, string>;
  /** Approval rule of the tool (e.g. `bashApprovalRule(patterns)`). */
  approval?: ApprovalRule;
  /** Minimum time between progress updates. Default 500 ms. */
  updateIntervalMs?: number;
  /** The workspace quota. Default: the runner's `limits.workspaceMb`. */
  quota?: WorkspaceQuota;
}

const MB = 1024 * 1024;

export const bashParameters = Type.Object({
  command: Type.String({
    description: "The shell command to run (bash -c), in the workspace directory",
    minLength: 1,
  }),
  timeout: Type.Optional(Type.Number({ description: "Timeout in seconds", minimum: 1 })),
});

export interface BashDetails {
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  /** Whether the command ran in a sandbox. */
  sandboxed: boolean;
}

/** A `bash` tool bound to `workspace()` (called per call, so one tool can serve per-thread workspaces). */
export function createBashTool(
  workspace: () => Promise<string>,
  options: BashToolOptions = {},
): ExtensionTool<typeof bashParameters, BashDetails> {
  const defaultTimeout = options.defaultTimeoutMs ?? 120_000;
  const maxTimeout = options.maxTimeoutMs ?? 600_000;
  const maxOutput = options.maxOutputBytes ?? 50_000;
  const interval = options.updateIntervalMs ?? 500;
  const runner = options.runner ?? createDirectRunner(options.env ? { extraEnv: options.env } : {});
  const quota = options.quota ?? new WorkspaceQuota(runner.limits.workspaceMb);
  const sandboxed = runner.kind !== "none";
  const where = sandboxed
    ? "in a sandbox: the workspace is at /workspace (also HOME), the rest of the system is read-only, /tmp is private"
    : "in the workspace directory";
  const tool: ExtensionTool<typeof bashParameters, BashDetails> = {
    name: "bash",
    label: "bash",
    description:
      `Run a shell command (bash -c) ${where}. Output is capped at ${maxOutput} bytes (start and end kept). ` +
      `Default timeout ${Math.round(defaultTimeout / 1000)} s, at most ${Math.round(maxTimeout / 1000)} s; ` +
      "the command and everything it started are killed when it times out or the run is stopped.",
    parameters: bashParameters,
    async execute(
      _id: string,
      params: Static<typeof bashParameters>,
      signal?: AbortSignal,
      onUpdate?: AgentToolUpdateCallback<BashDetails>,
    ) {
      if (signal?.aborted) throw new Error("Command not started: the run was stopped.");
      const cwd = await workspace();
      const timeoutMs = Math.min(
        params.timeout !== undefined ? params.timeout * 1000 : defaultTimeout,
        maxTimeout,
      );
      const output = new HeadTailBuffer(maxOutput);
      let lastUpdate = 0;
      // No file may be larger than what the quota leaves; a call that passes it with several
      // files is stopped by the watch.
      const before = await quota.standing(cwd);
      const capped = before.freeBytes < runner.limits.fileSizeMb * MB;
      const overQuota = new AbortController();
      let passedQuota = false;
      const watch = new QuotaWatch(quota, cwd, () => {
        passedQuota = true;
        overQuota.abort();
      });
      const stop = signal ? AbortSignal.any([signal, overQuota.signal]) : overQuota.signal;
      const result = await runner.run(params.command, {
        workspace: cwd,
        timeoutMs,
        signal: stop,
        ...(capped ? { fileSizeMb: before.freeBytes / MB } : {}),
        onOutput(chunk) {
          output.push(chunk);
          const now = Date.now();
          if (onUpdate && now - lastUpdate >= interval) {
            lastUpdate = now;
            onUpdate({
              content: [{ type: "text", text: output.text() }],
              details: {
                exitCode: null,
                timedOut: false,
                truncated: output.truncated,
                durationMs: 0,
                sandboxed,
              },
            });
          }
        },
      });
      watch.stop();
      const text = output.text();
      if (result.setupError) {
        throw new Error(
          `The sandbox could not start, so the command did not run: ${result.setupError}. ` +
            "Tell an admin; retrying will not help.",
        );
      }
      const after = passedQuota ? undefined : await quota.standing(cwd);
      const full = after !== undefined && after.usedBytes >= after.limitBytes;
      // A file size stop while the quota set the limit is the quota's doing: say that instead.
      const quotaStop = capped && result.limits.includes("fileSize");
      const notes = describeLimits(
        quotaStop ? result.limits.filter((k) => k !== "fileSize") : result.limits,
        runner.limits,
      );
      if (quotaStop || full) notes.push(quota.fullMessage(after ?? before));
      const noted = notes.length > 0 ? `${text}\n\n${notes.join("\n")}`.trim() : text;
      if (passedQuota) {
        const why =
          `Command stopped: the workspace passed its ${quota.limitMb} MB quota ` +
          "(tools.sandbox.limits.workspaceMb). Delete files you no longer need before writing more.";
        throw new Error(`${noted}\n\n${why}`.trim());
      }
      if (result.aborted)
        throw new Error(
          `${noted}\n\nCommand aborted: the run was stopped and the command was killed.`.trim(),
        );
      if (result.timedOut) {
        throw new Error(
          `${noted}\n\nCommand timed out after ${Math.round(timeoutMs / 1000)} s and was killed.`.trim(),
        );
      }
      if (result.exitCode !== 0) {
        const signal = result.exitSignal ?? signalOfExitCode(result.exitCode);
        const how = result.exitSignal
          ? `was killed by ${result.exitSignal}`
          : `exited with code ${result.exitCode}${signal ? ` (${signal})` : ""}`;
        throw new Error(`${noted}\n\nCommand ${how}.`.trim());
      }
      return {
        content: [{ type: "text", text: noted === "" ? "(no output)" : noted }],
        details: {
          exitCode: 0,
          timedOut: false,
          truncated: output.truncated,
          durationMs: result.durationMs,
          sandboxed,
        },
      };
    },
  };
  if (options.approval !== undefined) tool.approval = options.approval;
  return tool;
}
