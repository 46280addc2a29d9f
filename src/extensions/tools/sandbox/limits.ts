/**
 * Resource limits of tool processes, set as rlimits by the shell before the command runs (no cgroups
 * and no systemd needed), and the recognition of a limit being hit so the model gets a clear error
 * instead of a bare exit code. Every limit is per process except `processes` (the processes of the
 * sandbox's user) and `workspaceMb` (the thread's workspace, enforced by the tools: `quota.ts`).
 *
 * Memory is the address space (RLIMIT_AS): it counts every mapping a process makes (heap, private
 * and shared anonymous memory, files, memfd and System V segments while mapped), which RLIMIT_DATA
 * did not. The ways to hold memory without a mapping (memfd_create, shmget) are refused by the
 * seccomp filter, and /tmp and /dev/shm are a tmpfs of `tmpSizeMb`. The price: programs that reserve
 * more address space than they use (the JVM sizes its heap from the machine's RAM, WebAssembly
 * runtimes reserve guard regions) need a larger limit or their own flags (`java -Xmx512m`). A call
 * holds at most `processes` × `memoryMb` plus `tmpSizeMb`; a cgroup would bound the sum, but needs
 * systemd's delegation or a writable cgroup hierarchy, which Switchboard does not require.
 */
import { constants } from "node:os";

/** The limits, in the units the config uses. */
export interface SandboxLimits {
  /** CPU seconds per process; the process gets SIGXCPU when it uses them up. */
  cpuSeconds: number;
  /** Address space per process (RLIMIT_AS: every mapping, shared and file-backed ones too), in MB. */
  memoryMb: number;
  /** Largest file a process may write, in MB; a bigger write gets SIGXFSZ. */
  fileSizeMb: number;
  /** Processes (and threads) one call may run at once. Enforced inside the sandbox only. */
  processes: number;
  /** Size of the private /tmp (and /dev/shm) of one call, in MB. Sandbox only. */
  tmpSizeMb: number;
  /** Disk one thread's workspace may use, in MB (`quota.ts`); writes past it are refused. */
  workspaceMb: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  cpuSeconds: 300,
  memoryMb: 2048,
  fileSizeMb: 1024,
  processes: 256,
  tmpSizeMb: 256,
  workspaceMb: 2048,
};

/** Which limit a call ran into. */
export type LimitKind = "cpu" | "memory" | "fileSize" | "processes";

/** Per-call choices of `limitPrelude`. */
export interface PreludeOptions {
  /** False outside a sandbox: there RLIMIT_NPROC would count every process of the gateway's user. */
  withProcesses: boolean;
  /** The file size limit of this call when lower than `limits.fileSizeMb` (what the quota leaves). */
  fileSizeMb?: number | undefined;
}

/**
 * The shell lines that set the limits (hard and soft, so the command cannot raise them). CPU gets
 * a soft limit one second below the hard one, so the process first receives SIGXCPU (a clear
 * "CPU time limit exceeded") instead of a bare SIGKILL.
 */
export function limitPrelude(limits: SandboxLimits, o: PreludeOptions): string {
  const fileKb = Math.floor(Math.min(o.fileSizeMb ?? limits.fileSizeMb, limits.fileSizeMb) * 1024);
  // One line, so bash's line numbers in messages are off by one only (the command starts on line 2).
  const lines = [
    "ulimit -c 0",
    `ulimit -t ${limits.cpuSeconds + 1}`,
    `ulimit -S -t ${limits.cpuSeconds}`,
    `ulimit -v ${limits.memoryMb * 1024}`,
    `ulimit -f ${Math.max(0, fileKb)}`,
  ];
  if (o.withProcesses) lines.push(`ulimit -u ${limits.processes}`);
  // A gateway started with lower hard limits keeps those; the command then gets less, never more.
  return lines.map((l) => `${l} 2>/dev/null`).join("; ");
}

const SIGNAL_KINDS: Partial<Record<string, LimitKind>> = { SIGXCPU: "cpu", SIGXFSZ: "fileSize" };

/** What programs print when a limit stops them (bash, coreutils, Python, Node, glibc, C++). */
const OUTPUT_PATTERNS: readonly [RegExp, LimitKind][] = [
  [/CPU time limit exceeded/, "cpu"],
  [/File size limit exceeded/, "fileSize"],
  [/fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork|fork failed/i, "processes"],
  [/pthread_create|Resource temporarily unavailable.*thread|can't start new thread/i, "processes"],
  [
    /Cannot allocate memory|MemoryError|memory exhausted|out of memory|bad_alloc|cannot allocate|allocation failed|Fatal process OOM|Could not reserve enough space|failed to map segment/i,
    "memory",
  ],
];

/** The signal behind a shell-style exit code (128 + n), if it is one. */
export function signalOfExitCode(code: number | null): NodeJS.Signals | undefined {
  if (code === null || code <= 128 || code > 128 + 64) return undefined;
  const n = code - 128;
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(([, v]) => v === n)?.[0];
}

/**
 * Watches a call's output as it streams (so a message in the part of the output that is later cut
 * still counts) and its end, and reports which limits were hit.
 */
export class LimitWatcher {
  private readonly hit = new Set<LimitKind>();
  private carry = "";

  push(chunk: Buffer): void {
    // Keep the end of the previous chunk so a message split across two chunks is still seen.
    const text = this.carry + chunk.toString("utf8");
    for (const [re, kind] of OUTPUT_PATTERNS) if (re.test(text)) this.hit.add(kind);
    this.carry = text.slice(-120);
  }

  /**
   * The limits hit, given how the call ended (`signal`, or an exit code of 128 + signal). Messages
   * about memory and processes count only for a call that failed (a command that printed "out of
   * memory" and succeeded hit nothing); the kernel's CPU and file size signals always count.
   */
  finish(exitCode: number | null, signal: NodeJS.Signals | null, failed: boolean): LimitKind[] {
    const out = new Set<LimitKind>([...this.hit].filter((k) => failed || k === "cpu" || k === "fileSize"));
    const sig = signal ?? signalOfExitCode(exitCode);
    const fromSignal = sig ? SIGNAL_KINDS[sig] : undefined;
    if (fromSignal) out.add(fromSignal);
    return [...out];
  }
}

/** One sentence per limit hit, for the model: what happened, the limit, and where it is set. */
export function describeLimits(kinds: readonly LimitKind[], limits: SandboxLimits): string[] {
  return kinds.map((kind) => {
    switch (kind) {
      case "cpu":
        return `A process used up its CPU time limit (${limits.cpuSeconds} s per process, tools.sandbox.limits.cpuSeconds) and was stopped.`;
      case "memory":
        return `A process could not get more memory: the limit is ${limits.memoryMb} MB of address space per process (tools.sandbox.limits.memoryMb).`;
      case "fileSize":
        return `A process tried to write a file larger than the limit of ${limits.fileSizeMb} MB (tools.sandbox.limits.fileSizeMb) and was stopped.`;
      case "processes":
        return `A process could not be started: the limit is ${limits.processes} processes per command (tools.sandbox.limits.processes).`;
    }
    return "";
  });
}
