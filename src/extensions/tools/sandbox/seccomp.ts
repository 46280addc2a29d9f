/**
 * The sandbox's seccomp filter: the system calls in `seccomp/denied-syscalls.json` (data, one
 * entry per call with the reason) compiled to a classic BPF program that bubblewrap loads with
 * `--seccomp FD` before the command starts. A refused call fails with EPERM (clone3 with ENOSYS, so
 * the C library falls back to clone, whose namespace flags the filter can read); every other call
 * is allowed. A call of another architecture's ABI (x32 or i386 on x86_64) fails with ENOSYS, since
 * its numbers would slip past the table.
 *
 * Written by hand rather than with libseccomp: the program is a straight list of comparisons, and a
 * native dependency would need an install script on every machine.
 */
import { readFileSync } from "node:fs";

interface DeniedSyscall {
  name: string;
  x86_64?: number;
  aarch64?: number;
  why: string;
}

interface SeccompPolicy {
  syscalls: DeniedSyscall[];
  clone: { x86_64: number; aarch64: number; deniedFlags: string[] };
  clone3: { x86_64: number; aarch64: number };
}

/** The architectures the table has numbers for, by Node's `process.arch`. */
const ARCHES = {
  x64: { key: "x86_64", audit: 0xc000003e, x32Bit: 0x40000000 },
  arm64: { key: "aarch64", audit: 0xc00000b7, x32Bit: undefined },
} as const;

type Arch = keyof typeof ARCHES;

const CLONE_FLAGS: Readonly<Record<string, number>> = {
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
};

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
// Offsets in struct seccomp_data: nr, arch, then the arguments (low word first on little endian).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

let policy: SeccompPolicy | undefined;

/** The denied calls, as the repository's data file lists them. */
export function seccompPolicy(): SeccompPolicy {
  policy ??= JSON.parse(
    readFileSync(new URL("./seccomp/denied-syscalls.json", import.meta.url), "utf8"),
  ) as SeccompPolicy;
  return policy;
}

/** One instruction; jumps name labels resolved at the end. */
type Insn =
  | { op: "ld"; offset: number }
  | { op: "jeq" | "jge" | "jset"; k: number; yes: string; no?: string }
  | { op: "ret"; value: number; label?: string };

/** The denied calls of `arch` (`x64` or `arm64`) with their numbers there. */
export function deniedSyscalls(arch: Arch): { name: string; nr: number; errno: "EPERM" | "ENOSYS" }[] {
  const p = seccompPolicy();
  const key = ARCHES[arch].key;
  const out: { name: string; nr: number; errno: "EPERM" | "ENOSYS" }[] = [];
  for (const s of p.syscalls) {
    const nr = s[key];
    if (nr !== undefined) out.push({ name: s.name, nr, errno: "EPERM" });
  }
  out.push({ name: "clone3", nr: p.clone3[key], errno: "ENOSYS" });
  return out;
}

/**
 * The filter for `arch` as the bytes bubblewrap reads (an array of `struct sock_filter`), or
 * undefined on an architecture the table has no numbers for.
 */
export function compileSeccompFilter(arch: string = process.arch): Buffer | undefined {
  if (!(arch in ARCHES)) return undefined;
  const a = ARCHES[arch as Arch];
  const p = seccompPolicy();
  const flags = p.clone.deniedFlags.reduce((sum, name) => {
    const bit = CLONE_FLAGS[name];
    if (bit === undefined) throw new Error(`seccomp policy: unknown clone flag ${name}`);
    return sum | bit;
  }, 0);
  const prog: Insn[] = [
    { op: "ld", offset: OFFSET_ARCH },
    { op: "jeq", k: a.audit, yes: "next", no: "enosys" },
    { op: "ld", offset: OFFSET_NR },
  ];
  if (a.x32Bit !== undefined) prog.push({ op: "jge", k: a.x32Bit, yes: "enosys" });
  for (const s of deniedSyscalls(arch as Arch))
    prog.push({ op: "jeq", k: s.nr, yes: s.errno === "ENOSYS" ? "enosys" : "eperm" });
  prog.push(
    { op: "jeq", k: p.clone[a.key], yes: "next", no: "allow" },
    { op: "ld", offset: OFFSET_ARG0_LOW },
    { op: "jset", k: flags >>> 0, yes: "eperm", no: "allow" },
    { op: "ret", value: RET_ALLOW, label: "allow" },
    { op: "ret", value: RET_ERRNO | EPERM, label: "eperm" },
    { op: "ret", value: RET_ERRNO | ENOSYS, label: "enosys" },
  );
  const at = new Map<string, number>();
  prog.forEach((insn, i) => {
    if (insn.op === "ret" && insn.label) at.set(insn.label, i);
  });
  const jump = (from: number, label: string | undefined): number => {
    if (label === undefined || label === "next") return 0;
    const to = at.get(label);
    if (to === undefined || to - from - 1 > 255) throw new Error(`seccomp: bad jump to ${label}`);
    return to - from - 1;
  };
  const out = Buffer.alloc(prog.length * 8);
  prog.forEach((insn, i) => {
    const o = i * 8;
    if (insn.op === "ld") {
      out.writeUInt16LE(LD_W_ABS, o);
      out.writeUInt32LE(insn.offset, o + 4);
    } else if (insn.op === "ret") {
      out.writeUInt16LE(RET_K, o);
      out.writeUInt32LE(insn.value >>> 0, o + 4);
    } else {
      out.writeUInt16LE(insn.op === "jeq" ? JEQ_K : insn.op === "jge" ? JGE_K : JSET_K, o);
      out.writeUInt8(jump(i, insn.yes), o + 2);
      out.writeUInt8(jump(i, insn.no), o + 3);
      out.writeUInt32LE(insn.k >>> 0, o + 4);
    }
  });
  return out;
}
