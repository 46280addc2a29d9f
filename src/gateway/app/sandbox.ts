/**
 * The tool sandbox of a process that runs tools (roles `all` and `worker`): probed once at start
 * from `tools.sandbox`, logged, and shown by `/status` and `switchboard check`. A gateway-only
 * process runs no tools and probes nothing.
 */
import { errorMessage } from "../../agent/errors.js";
import { probeSandbox, type SandboxStatus } from "../../extensions/tools/index.js";
import type { ToolsConfig } from "../config/types.js";
import type { ReadinessProbe } from "../http/readiness.js";
import type { Logger } from "../log.js";

/** What `/status` says in a gateway-only process. */
export const TOOLS_RUN_BY_WORKERS =
  "run by the worker processes (each says at start whether it sandboxes them)";

/**
 * Probes the sandbox. Rejects (`SandboxUnavailableError`, saying what to fix) only when
 * `tools.sandbox.mode` is `bwrap` and bubblewrap cannot run here. Logs nothing: the caller reports
 * the outcome with `reportSandbox` once the config is known to be accepted, so a refused config
 * prints only its problems.
 */
export function setUpSandbox(tools: ToolsConfig, workspaceRoot: string): Promise<SandboxStatus> {
  return probeSandbox({ sandbox: tools.sandbox, workspaceRoot });
}

/** Logs how tools will run: the probe's warnings, then one line for the outcome. */
export function reportSandbox(status: SandboxStatus, logger: Logger): void {
  for (const warning of status.warnings) logger.warn({ sandbox: "bwrap" }, `tool sandbox: ${warning}`);
  if (status.sandboxed) logger.info({ sandbox: status.summary }, "tool sandbox ready");
  else
    logger.warn(
      { reason: status.reason },
      "tools are not sandboxed; every bash call needs an admin's approval",
    );
}

/** `switchboard check`'s line about the sandbox: fails only when `mode: bwrap` cannot be honoured. */
export function sandboxProbe(tools: ToolsConfig, workspaceRoot: string): ReadinessProbe {
  return {
    name: "sandbox",
    async check() {
      try {
        const status = await probeSandbox({ sandbox: tools.sandbox, workspaceRoot, createRoot: false });
        status.runner.close?.();
        const notes = status.warnings.length > 0 ? `; ${status.warnings.join("; ")}` : "";
        return { ok: true, detail: `${status.summary}${notes}` };
      } catch (err) {
        return { ok: false, detail: errorMessage(err) };
      }
    },
  };
}
