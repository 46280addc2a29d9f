/**
 * Resource limits of tool processes, set as rlimits by the shell before the command runs (no cgroups
 * needed), and the recognition of a limit being hit so the model gets a clear error instead of a
 * bare exit code. Every limit is per process except `processes`, which counts the processes of one
 * call inside the sandbox's user namespace.
 */
import { constants } from "node:os";

/** The limits, in the units the config uses. */
export interface SandboxLimits {
  /** CPU seconds per process; the process gets SIGXCPU when it uses them up. */
  cpuSeconds: number;
  /** Private memory per process (RLIMIT_DATA: heap and anonymous mappings), in MB. */
  memoryMb: number;
  /** Largest file a process may write, in MB; a bigger write gets SIGXFSZ. */
  fileSizeMb: number;
  /** Processes (and threads) one call may run at once. Enforced inside the sandbox only. */
  processes: number;
  /** Size of the private /tmp (and /dev/shm) of one call, in MB. Sandbox only. */
  tmpSizeMb: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  cpuSeconds: 300,
  memoryMb: 2048,
  fileSizeMb: 1024,
  processes: 256,
  tmpSizeMb: 256,
};

/** Which limit a call ran into. */
export type LimitKind = "cpu" | "memory" | "fileSize" | "processes";

/**
 * The shell lines that set the limits (hard and soft, so the command cannot raise them). CPU gets
 * a soft limit one second below the hard one, so the process first receives SIGXCPU (a clear
 * "CPU time limit exceeded") instead of a bare SIGKILL. `withProcesses` is false outside a sandbox:
 * there RLIMIT_NPROC would count every process of the gateway's user, not the call's.
 */
export function limitPrelude(limits: SandboxLimits, withProcesses: boolean): string {
  // One line, so bash's line numbers in messages are off by one only (the command starts on line 2).
  const lines = [
    "ulimit -c 0",
    `ulimit -t ${limits.cpuSeconds + 1}`,
    `ulimit -S -t ${limits.cpuSeconds}`,
    `ulimit -d ${limits.memoryMb * 1024}`,
    `ulimit -f ${limits.fileSizeMb * 1024}`,
  ];
  if (withProcesses) lines.push(`ulimit -u ${limits.processes}`);
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
    /Cannot allocate memory|MemoryError|memory exhausted|out of memory|bad_alloc|cannot allocate|allocation failed|Fatal process OOM/i,
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
        return `A process could not get more memory: the limit is ${limits.memoryMb} MB per process (tools.sandbox.limits.memoryMb).`;
      case "fileSize":
        return `A process tried to write a file larger than the limit of ${limits.fileSizeMb} MB (tools.sandbox.limits.fileSizeMb) and was stopped.`;
      case "processes":
        return `A process could not be started: the limit is ${limits.processes} processes per command (tools.sandbox.limits.processes).`;
    }
    return "";
  });
}
