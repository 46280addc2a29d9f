/**
 * Deciding, once at start, how tool commands run: `tools.sandbox.mode` and whether bubblewrap can
 * create its namespaces here. The probe runs a real sandboxed command (the same arguments every
 * call uses, in the workspace root) that also checks it is not root, so "sandboxed" means it works
 * as an unprivileged user, not that a binary exists.
 *
 * A root gateway never runs a tool as root (root outside the sandbox owns every root-owned file and
 * /proc/sys entry it can see, and is exempt from the process limit). It tries, in order: bwrap as
 * root dropping to `nobody` with setpriv (works wherever root may create namespaces, whatever
 * directories the workspace sits under), then bwrap as `nobody` in a user namespace (works where the
 * workspace is reachable for nobody). When neither works there is no sandbox, said as such, and
 * commands run as nobody with an admin's approval each.
 */

import { execFile } from "node:child_process";
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { SwitchboardError } from "../../../agent/errors.js";
import { type BwrapFeatures, createBwrapRunner, type SandboxIdentity } from "./bwrap.js";
import { createDirectRunner } from "./direct.js";
import { createEtcView } from "./etc-view.js";
import { compileSeccompFilter } from "./seccomp.js";
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
  /** Who sandboxed commands run as, when there is a sandbox. */
  readonly identity?: SandboxIdentity;
  /** Things that work but weaker than configured (no seccomp filter on this architecture). */
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
  const asRoot = gatewayUid(o) === 0;
  return {
    sandboxed: false,
    runner: createDirectRunner({
      envNames: s.env,
      limits: s.limits,
      ...(asRoot ? { account: NOBODY } : {}),
      ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
      ...(o.source ? { source: o.source } : {}),
    }),
    reason,
    summary: `not sandboxed (${reason}): every bash call waits for an admin's approval${asRoot ? " and runs as nobody" : ""}`,
    warnings: [],
  };
}

function gatewayUid(o: ProbeOptions): number {
  return o.uid ?? process.getuid?.() ?? -1;
}

/** The probe's command: it fails, saying so, when the sandbox's user is root. */
const PROBE_COMMAND =
  '[ "$EUID" -ne 0 ] && [ "$UID" -ne 0 ] || { echo "commands would run as root"; exit 1; }';

/** Runs the probe in a candidate runner; resolves with the complaint, or undefined when it worked. */
async function tryRunner(runner: CommandRunner, workspace: string): Promise<string | undefined> {
  let output = "";
  try {
    const r = await runner.run(PROBE_COMMAND, {
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

/** The identities a gateway of `uid` tries, in order (never root inside the sandbox). */
function identities(uid: number, source: NodeJS.ProcessEnv): { identity: SandboxIdentity; label: string }[] {
  if (uid !== 0) return [{ identity: { kind: "self" }, label: "" }];
  const out: { identity: SandboxIdentity; label: string }[] = [];
  const setpriv = findExecutable("setpriv", source.PATH);
  if (setpriv) out.push({ identity: { kind: "drop", account: NOBODY, setpriv }, label: "set up as root" });
  out.push({ identity: { kind: "account", account: NOBODY }, label: "as nobody" });
  return out;
}

async function probeIn(
  o: ProbeOptions,
  bwrap: string,
  probeDir: string,
  fail: (reason: string) => SandboxStatus,
): Promise<SandboxStatus> {
  const s = o.sandbox;
  const source = o.source ?? process.env;
  // Every option a current bwrap has; an older one says "Unknown option" and gets what it supports.
  let feats: BwrapFeatures = { disableUserns: true, tmpfsSize: true };
  const uid = gatewayUid(o);
  const complaints: string[] = [];
  const view = createEtcView();
  const seccomp = compileSeccompFilter();
  let detected = false;
  const attempt = async (identity: SandboxIdentity, label: string): Promise<CommandRunner | undefined> => {
    const runner = createBwrapRunner({
      bwrap,
      network: s.network,
      limits: s.limits,
      envNames: s.env,
      readOnlyPaths: s.readOnlyPaths,
      features: feats,
      etcDir: view.dir,
      identity,
      ...(seccomp ? { seccomp } : {}),
      ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
      ...(o.source ? { source: o.source } : {}),
    });
    const complaint = await tryRunner(runner, probeDir);
    if (complaint?.includes("Unknown option") && !detected) {
      detected = true;
      feats = await bwrapFeatures(bwrap);
      return attempt(identity, label);
    }
    if (complaint === undefined) return { ...runner, close: () => view.remove() };
    complaints.push(label ? `${label}: ${complaint}` : complaint);
    return undefined;
  };
  for (const { identity, label } of identities(uid, source)) {
    const runner = await attempt(identity, label);
    if (!runner) continue;
    const warnings: string[] = [];
    if (!feats.tmpfsSize)
      warnings.push("this bwrap cannot bound the size of /tmp (needs bubblewrap 0.7 or later)");
    if (!seccomp)
      warnings.push(`no seccomp filter for this architecture (${process.arch}); the other layers hold`);
    const who = runner.owner ? ", as nobody" : "";
    return {
      sandboxed: true,
      runner,
      identity,
      summary: `sandboxed with bubblewrap (network ${s.network}${who})`,
      warnings,
    };
  }
  view.remove();
  const why =
    uid === 0
      ? `bwrap cannot run commands as an unprivileged user here (${complaints.join("; ")}); ` +
        `a root gateway never runs them as root. Give it the right to create namespaces (or run Switchboard as an ordinary user)${findExecutable("setpriv", source.PATH) ? "" : ", install setpriv (util-linux)"}, or make ${o.workspaceRoot} reachable for nobody`
      : `bwrap cannot create its namespaces here (${complaints.join("; ")})`;
  return fail(why);
}
