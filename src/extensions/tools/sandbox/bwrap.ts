/**
 * The bubblewrap sandbox: every command runs in new mount, PID, IPC, UTS and network namespaces
 * (the network is shared only with `network: host`), as an unprivileged user, sees the system
 * directories and a short list of /etc read-only, its thread's workspace read-write at
 * `/workspace`, a fresh /proc with only its own processes, a private /tmp, an allowlisted
 * environment, no capabilities, a seccomp filter (`seccomp.ts`) and the limits. When bash exits, or
 * the call is stopped, the sandbox's PID 1 ends and the kernel kills every process left in the
 * namespace: background jobs, `setsid` and `nohup` included.
 *
 * Who the command runs as (`SandboxIdentity`) never includes root: a gateway running as an ordinary
 * user maps itself through a user namespace; a root gateway either lets bwrap set the sandbox up as
 * root and drops to an unprivileged account with `setpriv` before bash starts (the workspace may sit
 * under a directory only root can enter), or runs bwrap as that account.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { runProgramInGroup, startProgramInGroup } from "../process-tree.js";
import { SANDBOX_PATH, toolEnv } from "./env.js";
import { createEtcView } from "./etc-view.js";
import { LimitWatcher, limitPrelude, type SandboxLimits } from "./limits.js";
import type {
  Account,
  CommandRunner,
  CommandRunResult,
  ProcessStartOptions,
  SandboxNetwork,
} from "./types.js";

/**
 * How the sandbox's processes get their unprivileged identity:
 * - `self`: bwrap runs as the gateway's own (non-root) user, mapped to itself in a user namespace;
 * - `drop`: a root gateway runs bwrap as root without a user namespace (so it can mount a workspace
 *   under a directory only root may enter), and `setpriv` (at `setpriv`) drops to `account` with no
 *   capabilities and no new privileges before bash starts;
 * - `account`: a root gateway runs bwrap itself as `account`, in a user namespace.
 */
export type SandboxIdentity =
  | { kind: "self" }
  | { kind: "drop"; account: Account; setpriv: string }
  | { kind: "account"; account: Account };

/** Where the workspace appears inside the sandbox. */
export const SANDBOX_WORKSPACE = "/workspace";

/** The device nodes a command gets (no terminals: commands run without one). */
const DEV_NODES = ["null", "zero", "full", "random", "urandom"] as const;

/** What the installed bwrap supports (older releases lack some options). */
export interface BwrapFeatures {
  /** `--disable-userns` (0.8+): no user namespaces inside the sandbox. */
  disableUserns: boolean;
  /** `--size` for tmpfs (0.7+): a bounded /tmp. */
  tmpfsSize: boolean;
}

export interface BwrapRunnerOptions {
  /** Absolute path of the bwrap binary. */
  bwrap: string;
  network: SandboxNetwork;
  limits: SandboxLimits;
  envNames?: readonly string[];
  extraEnv?: Readonly<Record<string, string>>;
  readOnlyPaths?: readonly string[];
  /** Who commands run as. Default `self` (the gateway's own user, which must not be root). */
  identity?: SandboxIdentity;
  features: BwrapFeatures;
  /** The compiled seccomp filter (`compileSeccompFilter`); none when undefined. */
  seccomp?: Buffer;
  /** The /etc the sandbox sees (a directory); default: a fresh copy of the allowlist (`etc-view.ts`). */
  etcDir?: string;
  source?: NodeJS.ProcessEnv;
  /** The host's root, for tests of the argument list. Default `/`. */
  hostRoot?: string;
  /** Time between SIGTERM and SIGKILL. Default 250 ms. */
  killGraceMs?: number;
}

function kindOf(path: string): "dir" | "file" | { link: string } | undefined {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return { link: readlinkSync(path) };
    return st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/**
 * The arguments before the per-call part: namespaces, system mounts, /proc, /dev, /tmp. Computed
 * once per runner (the host's layout is read here: merged /usr or not, which /etc entries exist).
 */
export function bwrapBaseArgs(o: BwrapRunnerOptions & { etcDir: string }): string[] {
  const root = (o.hostRoot ?? "/").replace(/\/$/, "");
  const args: string[] = [];
  if (o.identity?.kind === "drop") {
    // Every namespace but the user namespace (--unshare-all would try one too, where the account
    // has no id); setpriv needs these two capabilities to become the account, and nothing else.
    args.push("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try");
    if (o.network !== "host") args.push("--unshare-net");
    args.push("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID");
  } else {
    args.push("--unshare-all", "--unshare-user", "--cap-drop", "ALL");
    if (o.features.disableUserns) args.push("--disable-userns");
    if (o.network === "host") args.push("--share-net");
  }
  if (o.seccomp) args.push("--seccomp", String(SECCOMP_FD));
  args.push("--die-with-parent", "--new-session", "--hostname", "sandbox");
  args.push("--ro-bind", `${root}/usr`, "/usr");
  for (const dir of ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]) {
    const kind = kindOf(`${root}/${dir}`);
    if (kind === undefined) continue;
    if (typeof kind === "object") args.push("--symlink", kind.link, `/${dir}`);
    else args.push("--ro-bind", `${root}/${dir}`, `/${dir}`);
  }
  args.push("--ro-bind", o.etcDir, "/etc");
  if (o.network === "host") {
    // Name resolution follows the host's live files (DHCP, VPNs), not the copy made at start.
    for (const name of ["resolv.conf", "hosts"]) {
      if (kindOf(`${root}/etc/${name}`) !== undefined)
        args.push("--ro-bind-try", `${root}/etc/${name}`, `/etc/${name}`);
    }
  }
  args.push("--proc", "/proc");
  // A minimal /dev of bind-mounted nodes in the (later read-only) root: cheaper than bwrap's --dev
  // (its own tmpfs, a devpts instance and a separate /dev/shm), and /dev/shm shares the bounded /tmp.
  // Made explicitly: set up as root (the `drop` identity), an implied parent would be root's alone.
  args.push("--dir", "/dev");
  for (const dev of DEV_NODES) args.push("--dev-bind", `/dev/${dev}`, `/dev/${dev}`);
  args.push("--symlink", "/proc/self/fd", "/dev/fd");
  for (const [i, name] of ["stdin", "stdout", "stderr"].entries())
    args.push("--symlink", `/proc/self/fd/${i}`, `/dev/${name}`);
  args.push("--symlink", "/tmp", "/dev/shm");
  if (o.features.tmpfsSize) args.push("--size", String(o.limits.tmpSizeMb * 1024 * 1024));
  // Sticky and writable for all, as /tmp is; in a user namespace the sandbox's user owns it anyway.
  args.push("--perms", "1777", "--tmpfs", "/tmp");
  // The extra read-only paths, after /tmp's tmpfs (which would hide one under /tmp). Their parents
  // are made explicitly readable for all: set up as root (the `drop` identity), a
  // parent bwrap implies is root's alone and the account could not reach the path.
  const mounted = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];
  const made = new Set<string>();
  for (const path of o.readOnlyPaths ?? []) {
    const parts = path.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const parent = `/${parts.slice(0, i).join("/")}`;
      if (
        made.has(parent) ||
        parent === "/tmp" ||
        mounted.some((m) => parent === m || parent.startsWith(`${m}/`))
      )
        continue;
      made.add(parent);
      args.push("--perms", "0755", "--dir", parent);
    }
    args.push("--ro-bind-try", path, path);
  }
  return args;
}

/** The file descriptor bwrap reads the seccomp program from. */
const SECCOMP_FD = 3;

/** What runs bash inside the sandbox: bash itself, or setpriv dropping to the account first. */
function commandPrefix(identity: SandboxIdentity | undefined): string[] {
  if (identity?.kind !== "drop") return [];
  const { uid, gid } = identity.account;
  return [
    identity.setpriv,
    `--reuid=${uid}`,
    `--regid=${gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--no-new-privs",
    "--",
  ];
}

/**
 * The full argument list for one call in `workspace` (host path); `scriptArgs` become the script's
 * `$0`, `$1`, … (a long-lived program's argv, run by `exec "$@"`).
 */
export function bwrapCallArgs(
  base: readonly string[],
  workspace: string,
  script: string,
  identity?: SandboxIdentity,
  scriptArgs: readonly string[] = [],
): string[] {
  return [
    ...base,
    "--bind",
    workspace,
    SANDBOX_WORKSPACE,
    "--chdir",
    SANDBOX_WORKSPACE,
    // Everything mounted: nothing but the workspace and /tmp (also /dev/shm) stays writable.
    "--remount-ro",
    "/",
    "--",
    ...commandPrefix(identity),
    "bash",
    "--noprofile",
    "--norc",
    "-c",
    script,
    ...scriptArgs,
  ];
}

/** The account commands run as, when it is not the gateway's own. */
function accountOf(identity: SandboxIdentity | undefined): Account | undefined {
  return identity && identity.kind !== "self" ? identity.account : undefined;
}

/** bwrap's own failure (it prints `bwrap: …` and exits 1 before the command starts). */
function setupErrorOf(head: string, exitCode: number | null): string | undefined {
  if (exitCode !== 1 || !head.startsWith("bwrap: ")) return undefined;
  return head.split("\n")[0]?.trim();
}

/** A runner that starts every command in a fresh bubblewrap sandbox. */
export function createBwrapRunner(o: BwrapRunnerOptions): CommandRunner {
  const view = o.etcDir === undefined ? createEtcView(o.hostRoot ?? "") : undefined;
  const etcDir = o.etcDir ?? view?.dir ?? "/etc";
  const base = bwrapBaseArgs({ ...o, etcDir });
  // A long-lived program may be given another network than the runner's commands (an MCP server
  // allowed to reach its API): its base arguments are built once per network asked for.
  const baseByNetwork = new Map<SandboxNetwork, string[]>([[o.network, base]]);
  const baseFor = (network: SandboxNetwork): string[] => {
    let args = baseByNetwork.get(network);
    if (!args) {
      args = bwrapBaseArgs({ ...o, network, etcDir });
      baseByNetwork.set(network, args);
    }
    return args;
  };
  const owner = accountOf(o.identity);
  // bwrap itself runs as the account only in `account` mode; `drop` starts it as root.
  const spawnAs = o.identity?.kind === "account" ? o.identity.account : undefined;
  const env = {
    ...toolEnv(SANDBOX_WORKSPACE, SANDBOX_PATH, o.envNames ?? [], o.source ?? process.env),
    ...o.extraEnv,
  };
  return {
    kind: "bwrap",
    workspacePath: () => SANDBOX_WORKSPACE,
    limits: o.limits,
    owner,
    close: () => view?.remove(),
    start(argv, start: ProcessStartOptions) {
      const prelude = limitPrelude(o.limits, { withProcesses: true });
      return startProgramInGroup(
        o.bwrap,
        bwrapCallArgs(
          baseFor(start.network ?? o.network),
          start.workspace,
          `${prelude}; exec "$@"`,
          o.identity,
          ["switchboard-program", ...argv],
        ),
        {
          cwd: "/",
          env: { ...env, ...start.env },
          ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
          ...(o.seccomp ? { extraInput: o.seccomp } : {}),
          ...(o.killGraceMs !== undefined ? { killGraceMs: o.killGraceMs } : {}),
        },
      );
    },
    async run(command, call): Promise<CommandRunResult> {
      const watcher = new LimitWatcher();
      let head = "";
      const prelude = limitPrelude(o.limits, { withProcesses: true, fileSizeMb: call.fileSizeMb });
      // bwrap runs with the sandbox's environment only, so its own /proc/<pid>/environ (PID 1
      // inside) holds nothing of the gateway's either.
      const result = await runProgramInGroup(
        o.bwrap,
        bwrapCallArgs(base, call.workspace, `${prelude}; exec 2>&1\n${command}`, o.identity),
        {
          cwd: "/",
          env,
          timeoutMs: call.timeoutMs,
          ...(call.signal ? { signal: call.signal } : {}),
          ...(spawnAs ? { uid: spawnAs.uid, gid: spawnAs.gid } : {}),
          ...(o.seccomp ? { extraInput: o.seccomp } : {}),
          ...(o.killGraceMs !== undefined ? { killGraceMs: o.killGraceMs } : {}),
          onOutput(chunk) {
            if (head.length < 512) head += chunk.toString("utf8");
            watcher.push(chunk);
            call.onOutput(chunk);
          },
        },
      );
      const setupError = setupErrorOf(head, result.exitCode);
      const failed = result.exitCode !== 0 || result.timedOut;
      return {
        ...result,
        limits: setupError ? [] : watcher.finish(result.exitCode, result.exitSignal, failed),
        ...(setupError ? { setupError } : {}),
      };
    },
  };
}
