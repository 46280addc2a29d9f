/**
 * Deciding, once at start, how tool commands run: `tools.sandbox.mode` and whether bubblewrap can
 * create its namespaces here. The probe runs a real sandboxed command (the same arguments every
 * call uses, in the workspace root), so "sandboxed" means it works, not that a binary exists.
 *
 * A root gateway runs the sandbox as `nobody` (65534): the kernel exempts root from the process
 * limit, and a sandbox that is root outside owns every root-owned file it can see. When `nobody`
 * cannot run it (the workspace root is not reachable for it, say), the sandbox runs as root with a
 * warning that the process limit does not hold.
 */

import { execFile } from "node:child_process";
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { SwitchboardError } from "../../../agent/errors.js";
import { type BwrapFeatures, createBwrapRunner } from "./bwrap.js";
import { createDirectRunner } from "./direct.js";
import { createEtcView } from "./etc-view.js";
import type { Account, CommandRunner, SandboxOptions } from "./types.js";

const run = promisify(execFile);

/** The unprivileged account a root gateway runs the sandbox as. */
export const NOBODY: Account = { uid: 65534, gid: 65534 };

/** What start decided; `/status`, `switchboard check` and the start line show `summary`. */
export interface SandboxStatus {
  /** Tool commands run in a sandbox. */
  readonly sandboxed: boolean;
  readonly runner: CommandRunner;
  /** One line for people: what runs how, and what that means for approvals. */
  readonly summary: string;
  /** Why there is no sandbox (mode none, or what failed), when there is none. */
  readonly reason?: string;
  /** Things that work but weaker than configured (the process limit under root). */
  readonly warnings: readonly string[];
}

export interface ProbeOptions {
  sandbox: SandboxOptions;
  /** The root of the thread workspaces; the probe command runs there. */
  workspaceRoot: string;
  /**
   * Create the root when missing (start: it is needed anyway). False (`switchboard check`): probe
   * in a temporary directory instead and leave nothing behind.
   */
  createRoot?: boolean;
  /** Fixed variables added to every command's environment (API users; the config names variables). */
  extraEnv?: Readonly<Record<string, string>>;
  /** The gateway's environment (PATH to find bwrap, values of `env` names). Default `process.env`. */
  source?: NodeJS.ProcessEnv;
  /** The gateway's uid. Default `process.getuid()`. */
  uid?: number;
}

/** `bwrap` mode could not be honoured; start fails with this. */
export class SandboxUnavailableError extends SwitchboardError {
  constructor(message: string) {
    super("sandbox.unavailable", message);
  }
}

/** The absolute path of `name` on `path`, if it is there and executable. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What the bwrap at `bwrap` supports, from its `--help`. */
export async function bwrapFeatures(bwrap: string): Promise<BwrapFeatures> {
  try {
    const { stdout, stderr } = await run(bwrap, ["--help"], { timeout: 5000 });
    const help = stdout + stderr;
    return { disableUserns: help.includes("--disable-userns"), tmpfsSize: help.includes("--size") };
  } catch {
    return { disableUserns: false, tmpfsSize: false };
  }
}

function unsandboxed(o: ProbeOptions, reason: string): SandboxStatus {
  const s = o.sandbox;
  return {
    sandboxed: false,
    runner: createDirectRunner({
      envNames: s.env,
      limits: s.limits,
      ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
      ...(o.source ? { source: o.source } : {}),
    }),
    reason,
    summary: `not sandboxed (${reason}): every bash call waits for an admin's approval`,
    warnings: [],
  };
}

/** Runs `true` in a candidate runner; resolves with bwrap's complaint, or undefined when it worked. */
async function tryRunner(runner: CommandRunner, workspace: string): Promise<string | undefined> {
  let output = "";
  try {
    const r = await runner.run("true", {
      workspace,
      timeoutMs: 10_000,
      onOutput: (chunk) => {
        output += chunk.toString("utf8");
      },
    });
    if (r.exitCode === 0) return undefined;
    const first = output.trim().split("\n")[0] ?? "";
    return first || `exit code ${r.exitCode ?? r.exitSignal}`;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Decides how tool commands run. `auto`: bubblewrap when a probe command succeeds, else none (with
 * the reason). `bwrap`: bubblewrap or a `SandboxUnavailableError` saying what to fix. `none`: no
 * sandbox. Never throws in `auto` and `none`.
 */
export async function probeSandbox(o: ProbeOptions): Promise<SandboxStatus> {
  const s = o.sandbox;
  if (s.mode === "none") return unsandboxed(o, "tools.sandbox.mode is none");
  const source = o.source ?? process.env;
  const fail = (reason: string): SandboxStatus => {
    if (s.mode === "bwrap") {
      throw new SandboxUnavailableError(
        `tools.sandbox.mode is bwrap, but the sandbox cannot run here: ${reason}. ` +
          "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow it to create user " +
          "namespaces (docs/deploy.md, 'The tool sandbox'), or set tools.sandbox.mode to auto or none.",
      );
    }
    return unsandboxed(o, reason);
  };
  const bwrap = findExecutable("bwrap", source.PATH);
  if (!bwrap) return fail("bwrap is not installed");
  let probeDir = o.workspaceRoot;
  let scratch: string | undefined;
  if (o.createRoot === false && !existsSync(o.workspaceRoot)) {
    scratch = mkdtempSync(join(tmpdir(), "switchboard-probe-"));
    chmodSync(scratch, 0o755);
    probeDir = scratch;
  } else {
    try {
      mkdirSync(o.workspaceRoot, { recursive: true });
    } catch (e) {
      return fail(`the workspace directory ${o.workspaceRoot} cannot be created (${(e as Error).message})`);
    }
  }
  try {
    return await probeIn(o, bwrap, probeDir, fail);
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

async function probeIn(
  o: ProbeOptions,
  bwrap: string,
  probeDir: string,
  fail: (reason: string) => SandboxStatus,
): Promise<SandboxStatus> {
  const s = o.sandbox;
  // Every option a current bwrap has; an older one says "Unknown option" and gets what it supports.
  let feats: BwrapFeatures = { disableUserns: true, tmpfsSize: true };
  const uid = o.uid ?? process.getuid?.() ?? -1;
  const candidates: (Account | undefined)[] = uid === 0 ? [NOBODY, undefined] : [undefined];
  const complaints: string[] = [];
  const view = createEtcView();
  let detected = false;
  const attempt = async (account: Account | undefined): Promise<CommandRunner | undefined> => {
    const runner = createBwrapRunner({
      bwrap,
      network: s.network,
      limits: s.limits,
      envNames: s.env,
      readOnlyPaths: s.readOnlyPaths,
      features: feats,
      etcDir: view.dir,
      ...(account ? { account } : {}),
      ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
      ...(o.source ? { source: o.source } : {}),
    });
    let complaint = await tryRunner(runner, probeDir);
    if (complaint?.includes("Unknown option") && !detected) {
      detected = true;
      feats = await bwrapFeatures(bwrap);
      return attempt(account);
    }
    if (complaint === undefined) return { ...runner, close: () => view.remove() };
    complaint = account ? `as nobody: ${complaint}` : complaint;
    complaints.push(complaint);
    return undefined;
  };
  for (const account of candidates) {
    const runner = await attempt(account);
    if (!runner) continue;
    const warnings: string[] = [];
    if (uid === 0 && !account) {
      warnings.push(
        `the sandbox runs as root because user nobody cannot run it (${complaints[0] ?? "unknown"}); ` +
          "root is exempt from the process limit. Run Switchboard as an unprivileged user, or make " +
          `${o.workspaceRoot} reachable for nobody.`,
      );
    }
    if (!feats.tmpfsSize)
      warnings.push("this bwrap cannot bound the size of /tmp (needs bubblewrap 0.7 or later)");
    const who = account ? ", as nobody" : "";
    return {
      sandboxed: true,
      runner,
      summary: `sandboxed with bubblewrap (network ${s.network}${who})`,
      warnings,
    };
  }
  view.remove();
  return fail(`bwrap cannot create its namespaces here (${complaints.join("; ")})`);
}
