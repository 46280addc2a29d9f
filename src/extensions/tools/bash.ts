/**
 * The `bash` tool: runs a command in the thread's workspace with a timeout, output capped to its
 * head and tail, progress as tool updates, and the whole process tree killed on abort or timeout.
 * The command gets a minimal environment (no API keys or platform tokens of the gateway) plus what
 * the configuration passes on.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { AgentToolUpdateCallback } from "../../agent/types.js";
import type { ApprovalRule, ExtensionTool } from "../types.js";
import { HeadTailBuffer } from "./output-buffer.js";
import { runInProcessGroup } from "./process-tree.js";

export interface BashToolOptions {
  /** Default timeout. Default 120 000 ms. */
  defaultTimeoutMs?: number;
  /** Longest timeout the model may ask for. Default 600 000 ms. */
  maxTimeoutMs?: number;
  /** Output kept (head and tail). Default 50 000 bytes. */
  maxOutputBytes?: number;
  /** Extra environment variables (the command otherwise gets PATH, LANG, HOME=workspace, TERM=dumb). */
  env?: Record<string, string>;
  /** Approval rule of the tool (e.g. `bashApprovalRule(patterns)`). */
  approval?: ApprovalRule;
  /** Minimum time between progress updates. Default 500 ms. */
  updateIntervalMs?: number;
}

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
}

/** The environment a command gets: nothing secret from the gateway's own environment. */
export function commandEnv(workspace: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: process.env.LANG ?? "C.UTF-8",
    HOME: workspace,
    TERM: "dumb",
    ...extra,
  };
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
  const tool: ExtensionTool<typeof bashParameters, BashDetails> = {
    name: "bash",
    label: "bash",
    description:
      `Run a shell command in the workspace directory. Output is capped at ${maxOutput} bytes (start and end kept). ` +
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
      const result = await runInProcessGroup(params.command, {
        cwd,
        env: commandEnv(cwd, options.env),
        timeoutMs,
        ...(signal ? { signal } : {}),
        onOutput(chunk) {
          output.push(chunk);
          const now = Date.now();
          if (onUpdate && now - lastUpdate >= interval) {
            lastUpdate = now;
            onUpdate({
              content: [{ type: "text", text: output.text() }],
              details: { exitCode: null, timedOut: false, truncated: output.truncated, durationMs: 0 },
            });
          }
        },
      });
      const text = output.text();
      if (result.aborted)
        throw new Error(`${text}\n\nCommand aborted: the run was stopped and the command was killed.`.trim());
      if (result.timedOut) {
        throw new Error(
          `${text}\n\nCommand timed out after ${Math.round(timeoutMs / 1000)} s and was killed.`.trim(),
        );
      }
      if (result.exitCode !== 0) {
        const how = result.exitSignal
          ? `was killed by ${result.exitSignal}`
          : `exited with code ${result.exitCode}`;
        throw new Error(`${text}\n\nCommand ${how}.`.trim());
      }
      return {
        content: [{ type: "text", text: text === "" ? "(no output)" : text }],
        details: { exitCode: 0, timedOut: false, truncated: output.truncated, durationMs: result.durationMs },
      };
    },
  };
  if (options.approval !== undefined) tool.approval = options.approval;
  return tool;
}
