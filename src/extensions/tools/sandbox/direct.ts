/**
 * The runner without a sandbox: bash as a child of the gateway, in its own process group, in the
 * workspace, with an allowlisted environment and the per-process limits. It sees everything its user
 * can (files, processes, the network), which is why every call it makes needs an admin's approval.
 * A root gateway runs it as an unprivileged account (`account`), never as root: the child enters
 * the workspace before it gives up root, so a workspace under a directory only root may enter works.
 *
 * Without a PID namespace, a process that leaves the call's process group (`setsid`, a double fork)
 * would outlive the call; each call's environment carries a variable of its own
 * (`SWITCHBOARD_CALL_ID`), and every process still holding it is killed when the call ends. A
 * command that clears its environment on purpose escapes that; this runner is for admins who
 * approve every call, not a boundary.
 */
import { randomBytes } from "node:crypto";
import { killMarked, runProgramInGroup, startProgramInGroup } from "../process-tree.js";
import { toolEnv } from "./env.js";
import { DEFAULT_LIMITS, LimitWatcher, limitPrelude, type SandboxLimits } from "./limits.js";
import type { Account, CommandRunner, CommandRunResult } from "./types.js";

/** The variable that marks the processes of one call outside a sandbox. */
export const CALL_MARKER = "SWITCHBOARD_CALL_ID";

export interface DirectRunnerOptions {
  /** Variables passed from `source` (default `process.env`). */
  envNames?: readonly string[];
  /** Fixed variables added to the environment. */
  extraEnv?: Readonly<Record<string, string>>;
  limits?: SandboxLimits;
  source?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL. Default 250 ms. */
  killGraceMs?: number;
  /** Run commands as this account (a root gateway must pass one). */
  account?: Account;
}

/** A runner that starts commands directly (no sandbox). */
export function createDirectRunner(options: DirectRunnerOptions = {}): CommandRunner {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const source = options.source ?? process.env;
  const account = options.account;
  const envFor = (workspace: string, marker: string): NodeJS.ProcessEnv => ({
    ...toolEnv(workspace, source.PATH ?? "/usr/local/bin:/usr/bin:/bin", options.envNames ?? [], source),
    ...options.extraEnv,
    [CALL_MARKER]: marker,
  });
  // Again while it finds some: a process it killed may have forked during the scan.
  const sweepOf = (marker: string) => async () => {
    for (let pass = 0; pass < 3 && (await killMarked(CALL_MARKER, marker)) > 0; pass++);
  };
  return {
    kind: "none",
    workspacePath: (host) => host,
    limits,
    owner: account,
    async run(command, o): Promise<CommandRunResult> {
      const marker = randomBytes(12).toString("hex");
      const env = envFor(o.workspace, marker);
      const prelude = limitPrelude(limits, { withProcesses: false, fileSizeMb: o.fileSizeMb });
      const watcher = new LimitWatcher();
      const result = await runProgramInGroup("bash", ["-c", `${prelude}; exec 2>&1\n${command}`], {
        cwd: o.workspace,
        env,
        timeoutMs: o.timeoutMs,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
        ...(account ? { uid: account.uid, gid: account.gid } : {}),
        sweep: sweepOf(marker),
        onOutput(chunk) {
          watcher.push(chunk);
          o.onOutput(chunk);
        },
      });
      const failed = result.exitCode !== 0 || result.timedOut;
      return { ...result, limits: watcher.finish(result.exitCode, result.exitSignal, failed) };
    },
    // Without a sandbox the program has the host's network whatever `network` asks: only approval guards it.
    start(argv, start) {
      const marker = randomBytes(12).toString("hex");
      const prelude = limitPrelude(limits, { withProcesses: false });
      return startProgramInGroup("bash", ["-c", `${prelude}; exec "$@"`, "switchboard-program", ...argv], {
        cwd: start.workspace,
        env: { ...envFor(start.workspace, marker), ...start.env },
        ...(account ? { uid: account.uid, gid: account.gid } : {}),
        ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
        sweep: sweepOf(marker),
      });
    },
  };
}
