/**
 * The runner without a sandbox: bash as a child of the gateway, in its own process group, in the
 * workspace, with an allowlisted environment and the per-process limits. It sees everything the
 * gateway's user can (files, processes, the network), which is why every call it makes needs an
 * admin's approval.
 */
import { runProgramInGroup } from "../process-tree.js";
import { toolEnv } from "./env.js";
import { DEFAULT_LIMITS, LimitWatcher, limitPrelude, type SandboxLimits } from "./limits.js";
import type { CommandRunner, CommandRunResult } from "./types.js";

export interface DirectRunnerOptions {
  /** Variables passed from `source` (default `process.env`). */
  envNames?: readonly string[];
  /** Fixed variables added to the environment. */
  extraEnv?: Readonly<Record<string, string>>;
  limits?: SandboxLimits;
  source?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL. Default 250 ms. */
  killGraceMs?: number;
}

/** A runner that starts commands directly (no sandbox). */
export function createDirectRunner(options: DirectRunnerOptions = {}): CommandRunner {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const source = options.source ?? process.env;
  const prelude = limitPrelude(limits, false);
  return {
    kind: "none",
    workspacePath: (host) => host,
    limits,
    owner: undefined,
    async run(command, o): Promise<CommandRunResult> {
      const env = {
        ...toolEnv(
          o.workspace,
          source.PATH ?? "/usr/local/bin:/usr/bin:/bin",
          options.envNames ?? [],
          source,
        ),
        ...options.extraEnv,
      };
      const watcher = new LimitWatcher();
      const result = await runProgramInGroup("bash", ["-c", `${prelude}; exec 2>&1\n${command}`], {
        cwd: o.workspace,
        env,
        timeoutMs: o.timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
        onOutput(chunk) {
          watcher.push(chunk);
          o.onOutput(chunk);
        },
      });
      const failed = result.exitCode !== 0 || result.timedOut;
      return { ...result, limits: watcher.finish(result.exitCode, result.exitSignal, failed) };
    },
  };
}
