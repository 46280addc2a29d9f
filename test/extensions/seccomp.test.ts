/**
 * The sandbox's seccomp filter, call by call: every system call the data file lists fails inside the
 * sandbox with the error the filter gives (EPERM; clone3 ENOSYS), a call of another ABI fails with
 * ENOSYS, namespace flags on clone are refused, and ordinary work (forks, threads, pipes) goes on.
 * The calls are made with perl's `syscall`, which Debian's perl-base has on every machine.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { chown, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileSeccompFilter, deniedSyscalls } from "../../src/extensions/tools/index.js";
import { seccompPolicy } from "../../src/extensions/tools/sandbox/seccomp.js";
import { bwrapRunner, bwrapUnavailable } from "../support/sandbox.js";

const unavailable = await bwrapUnavailable();
const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : undefined;
const PYTHON = "/usr/bin/python3";
const hasPython = existsSync(PYTHON);

describe("the seccomp policy (data)", () => {
  it("names a reason and a number on each architecture it lists, and compiles for both", () => {
    for (const s of seccompPolicy().syscalls) {
      expect(s.why.length, s.name).toBeGreaterThan(3);
      expect(s.x86_64 ?? s.aarch64, s.name).toBeTypeOf("number");
    }
    for (const a of ["x64", "arm64"]) {
      const program = compileSeccompFilter(a);
      // A classic BPF program: whole instructions, within the kernel's 4096-instruction limit.
      expect(program && program.length % 8).toBe(0);
      expect((program?.length ?? 0) / 8).toBeLessThan(4096);
    }
    expect(compileSeccompFilter("riscv64")).toBeUndefined();
  });
});

describe.skipIf(unavailable !== undefined || arch === undefined)("the seccomp filter in the sandbox", () => {
  let root: string;
  let ws: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "sb-seccomp-"));
    chmodSync(root, 0o755);
    ws = join(root, "ws");
    await mkdir(ws);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function run(command: string): Promise<string> {
    const runner = await bwrapRunner();
    if (runner.owner) await chown(ws, runner.owner.uid, runner.owner.gid);
    let output = "";
    await runner.run(command, {
      workspace: ws,
      timeoutMs: 20_000,
      onOutput: (c) => {
        output += c.toString("utf8");
      },
    });
    return output;
  }

  it("every listed call fails with the filter's error", async () => {
    const calls = deniedSyscalls(arch ?? "x64");
    // Zero arguments: harmless wherever a call got through, and enough to reach the filter.
    const out = await run(
      `perl -e 'for my $nr (@ARGV) { my $r = syscall($nr + 0, 0, 0, 0, 0, 0, 0); print "$nr $r ", $! + 0, "\\n" }' ${calls.map((c) => c.nr).join(" ")}`,
    );
    const errno = { EPERM: 1, ENOSYS: 38 };
    const got = new Map(
      out
        .trim()
        .split("\n")
        .map((l) => l.split(" "))
        .map(([nr, r, e]) => [Number(nr), `${r} ${e}`]),
    );
    for (const c of calls) expect(got.get(c.nr), c.name).toBe(`-1 ${errno[c.errno]}`);
  });

  it("is loaded in every command, refuses namespaces and other ABIs, and leaves ordinary work alone", async () => {
    const clone = seccompPolicy().clone[arch === "arm64" ? "aarch64" : "x86_64"];
    const lines = [
      "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status",
      // CLONE_NEWUSER | SIGCHLD: a child with a user namespace of its own.
      `perl -e 'my $r = syscall(${clone}, 0x10000011, 0, 0, 0, 0); print "clone-newuser $r ", $! + 0, "\\n"'`,
      "unshare -U true 2>/dev/null || echo unshare-refused",
      ...(arch === "x64" ? [`perl -e 'my $r = syscall(0x40000027); print "x32 $r ", $! + 0, "\\n"'`] : []),
      "(sleep 0.05 &) ; wait; echo fork-ok",
      "echo piped | cat",
      // Threads are clone without namespace flags (python3-minimal is on Debian machines).
      ...(hasPython
        ? [
            `${PYTHON} -c 'import threading; t = threading.Thread(target=print, args=("thread-ok",)); t.start(); t.join()'`,
          ]
        : []),
    ];
    const out = await run(lines.join("; "));
    expect(out).toContain("Seccomp:\t2");
    expect(out).toContain("NoNewPrivs:\t1");
    expect(out).toContain("clone-newuser -1 1");
    expect(out).toContain("unshare-refused");
    if (arch === "x64") expect(out).toContain("x32 -1 38");
    expect(out).toContain("fork-ok");
    expect(out).toContain("piped");
    if (hasPython) expect(out).toContain("thread-ok");
  });
});
