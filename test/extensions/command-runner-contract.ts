/**
 * The contract every `CommandRunner` passes (the bubblewrap sandbox and the direct runner): bash in
 * the workspace, an allowlisted environment, every process of a call gone when it ends (exit,
 * timeout, abort), the command's failure as data, and each limit, when hit, reported by name.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { chown, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CALL_MARKER,
  type CommandRunner,
  type CommandRunResult,
  type SandboxLimits,
} from "../../src/extensions/tools/index.js";

export interface RunnerFactory {
  name: string;
  /** Why the suite cannot run here (bwrap missing), or undefined. */
  unavailable: string | undefined;
  create(o: {
    limits?: Partial<SandboxLimits>;
    envNames?: string[];
    source?: NodeJS.ProcessEnv;
  }): Promise<CommandRunner>;
  /** Whether the process limit holds (inside the sandbox only). */
  limitsProcesses: boolean;
}

/** Holds for `ms`: what "nothing happens any more" is checked with. */
async function stays(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!cond()) throw new Error(`${what} changed`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a `sleep <arg>` runs anywhere on the host. */
function sleeping(arg: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8") === `sleep\0${arg}\0`) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

export function commandRunnerContract(factory: RunnerFactory): void {
  describe(`CommandRunner contract: ${factory.name}`, () => {
    const skip = factory.unavailable !== undefined;
    let root: string;
    let ws: string;

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), "sb-runner-"));
      chmodSync(root, 0o755);
      ws = join(root, "ws");
      await mkdir(ws);
      const runner = skip ? undefined : await factory.create({});
      if (runner?.owner) await chown(ws, runner.owner.uid, runner.owner.gid);
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    async function run(
      runner: CommandRunner,
      command: string,
      o: { timeoutMs?: number; signal?: AbortSignal } = {},
    ): Promise<CommandRunResult & { output: string }> {
      let output = "";
      const r = await runner.run(command, {
        workspace: ws,
        timeoutMs: o.timeoutMs ?? 20_000,
        ...(o.signal ? { signal: o.signal } : {}),
        onOutput: (chunk) => {
          output += chunk.toString("utf8");
        },
      });
      return { ...r, output };
    }

    it.skipIf(skip)("runs bash in the workspace with stderr interleaved, HOME there too", async () => {
      const runner = await factory.create({});
      const r = await run(runner, 'pwd; echo to-stderr >&2; echo "$HOME"; echo $BASH_VERSION | cut -c1');
      const where = runner.workspacePath(ws);
      expect(r.output).toBe(`${where}\nto-stderr\n${where}\n5\n`);
      expect(r).toMatchObject({ exitCode: 0, timedOut: false, aborted: false, limits: [] });
    });

    it.skipIf(skip)("a failing command is data: its exit code, never a rejection", async () => {
      const runner = await factory.create({});
      const r = await run(runner, "echo partial; exit 3");
      expect(r.output).toBe("partial\n");
      expect(r.exitCode).toBe(3);
    });

    it.skipIf(skip)("the environment holds the allowlist and the named variables only", async () => {
      const source = { ...process.env, SB_CANARY_TOKEN: "canary-7f3a", SB_PASSED: "visible" };
      const runner = await factory.create({ envNames: ["SB_PASSED"], source });
      const r = await run(runner, "env | sort");
      expect(r.output).not.toContain("canary-7f3a");
      expect(r.output).toContain("SB_PASSED=visible");
      const names = r.output
        .trim()
        .split("\n")
        .map((l) => l.split("=")[0]);
      expect(
        names.filter(
          (n) =>
            !["PATH", "HOME", "LANG", "TERM", "PWD", "SHLVL", "_", "SB_PASSED", CALL_MARKER].includes(
              n ?? "",
            ),
        ),
      ).toEqual([]);
    });

    it.skipIf(skip)("background jobs end with the command", async () => {
      const runner = await factory.create({});
      const r = await run(runner, "(while true; do echo x >> bg-tick; sleep 0.05; done) & echo started");
      expect(r.output).toBe("started\n");
      const at = size(join(ws, "bg-tick"));
      await stays(() => size(join(ws, "bg-tick")) === at, 500, "the background job's file");
    });

    it.skipIf(skip)(
      "processes that leave the process group (setsid, nohup) still die with the call",
      async () => {
        const runner = await factory.create({});
        const r = await run(
          runner,
          "setsid sh -c 'while true; do echo x >> escaped; sleep 0.05; done' & nohup sh -c 'sleep 0.3; echo late > nohup-late' >/dev/null 2>&1 & sleep 0.2; echo started",
        );
        expect(r.output).toContain("started");
        const at = size(join(ws, "escaped"));
        expect(at).toBeGreaterThan(0);
        await stays(() => size(join(ws, "escaped")) === at, 600, "the escaped job's file");
        expect(existsSync(join(ws, "nohup-late"))).toBe(false);
      },
    );

    it.skipIf(skip)("a timeout kills the command and everything it started", async () => {
      const runner = await factory.create({});
      const r = await run(runner, "(while true; do echo x >> to-tick; sleep 0.05; done) & sleep 30", {
        timeoutMs: 600,
      });
      expect(r.timedOut).toBe(true);
      const at = size(join(ws, "to-tick"));
      expect(at).toBeGreaterThan(0);
      await stays(() => size(join(ws, "to-tick")) === at, 500, "the killed job's file");
    });

    it.skipIf(skip)("an abort kills the command and everything it started", async () => {
      const runner = await factory.create({});
      const stop = new AbortController();
      const running = run(runner, "(while true; do echo x >> ab-tick; sleep 0.05; done) & sleep 30", {
        signal: stop.signal,
      });
      const end = Date.now() + 10_000;
      while (size(join(ws, "ab-tick")) === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      stop.abort();
      const r = await running;
      expect(r.aborted).toBe(true);
      const at = size(join(ws, "ab-tick"));
      await stays(() => size(join(ws, "ab-tick")) === at, 500, "the aborted job's file");
    });

    it.skipIf(skip)("the CPU limit stops a busy process and is named", async () => {
      const runner = await factory.create({ limits: { cpuSeconds: 1 } });
      const r = await run(runner, "while :; do :; done");
      expect(r.limits).toContain("cpu");
    });

    it.skipIf(skip)("the file size limit stops a big write and is named", async () => {
      const runner = await factory.create({ limits: { fileSizeMb: 1 } });
      const r = await run(runner, "head -c 3000000 /dev/zero > big.bin");
      expect(r.limits).toContain("fileSize");
      expect(size(join(ws, "big.bin"))).toBeLessThanOrEqual(1024 * 1024);
    });

    it.skipIf(skip)("the memory limit refuses a big allocation and is named", async () => {
      const runner = await factory.create({ limits: { memoryMb: 64 } });
      const r = await run(runner, "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo $" + "{#x}");
      expect(r.exitCode).not.toBe(0);
      expect(r.limits).toContain("memory");
    });

    // Python maps memory the ways a C program can; Debian's python3-minimal is on every CI machine.
    const python = "/usr/bin/python3";
    const noPython = !existsSync(python);

    it.skipIf(skip || noPython)(
      "a shared anonymous mapping past the memory limit fails; one within it works",
      async () => {
        const runner = await factory.create({ limits: { memoryMb: 256 } });
        const map = (mb: number) =>
          `${python} -c "import mmap; m = mmap.mmap(-1, ${mb} << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS); m[::4096] = b'x' * ((${mb} << 20) // 4096); print('mapped ${mb}')"`;
        const big = await run(runner, map(600));
        expect(big.output).not.toContain("mapped 600");
        expect(big.exitCode).not.toBe(0);
        expect(big.limits).toContain("memory");
        const small = await run(runner, map(32));
        expect(small.output).toContain("mapped 32");
      },
    );

    it.skipIf(skip || noPython)("a memfd mapping past the memory limit fails", async () => {
      const runner = await factory.create({ limits: { memoryMb: 256 } });
      const r = await run(
        runner,
        `${python} -c "import os, mmap; fd = os.memfd_create('x'); os.ftruncate(fd, 600 << 20); m = mmap.mmap(fd, 600 << 20); m[::4096] = b'x' * ((600 << 20) // 4096); print('mapped')"`,
      );
      expect(r.output).not.toContain("mapped");
      expect(r.exitCode).not.toBe(0);
    });

    it.skipIf(skip || !factory.limitsProcesses)(
      "the process limit refuses more processes and is named",
      async () => {
        const runner = await factory.create({ limits: { processes: 8 } });
        // dash does not retry a failed fork (bash waits and retries for a while).
        const r = await run(
          runner,
          "sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do sleep 2 & done; wait'",
        );
        expect(r.limits).toContain("processes");
        expect(r.output).toMatch(/fork/i);
      },
    );

    it.skipIf(skip)(
      "start: a long-lived program talks over stdin/stdout in the workspace with its own variables; stop ends it and its children",
      async () => {
        const runner = await factory.create({});
        const program = runner.start(
          [
            "bash",
            "-c",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
            'sleep 3007 & while read -r line; do echo "got $line in $PWD as ${SERVER_ONLY:-unset}"; done',
          ],
          { workspace: ws, env: { SERVER_ONLY: "mine" } },
        );
        let out = "";
        program.child.stdout?.on("data", (c: Buffer) => {
          out += c.toString();
        });
        program.child.stdin?.write("ping\n");
        await until(() => out.includes("got ping"));
        expect(out).toBe(`got ping in ${runner.workspacePath(ws)} as mine\n`);
        await until(() => sleeping("3007"));
        await program.stop();
        const exit = await program.exited;
        expect(exit.code === 0 && exit.signal === null).toBe(false);
        // The background sleep went with it.
        await until(() => !sleeping("3007"));
      },
    );

    it.skipIf(skip)("start: a program that is not there reports its exit, it does not throw", async () => {
      const runner = await factory.create({});
      const program = runner.start(["no-such-program-here"], { workspace: ws });
      const exit = await program.exited;
      expect(exit.code).toBe(127);
    });

    it.skipIf(skip)("an unknown command fails with bash's message", async () => {
      const runner = await factory.create({});
      const r = await run(runner, "no-such-command-here");
      expect(r.exitCode).toBe(127);
      expect(r.output).toContain("no-such-command-here: command not found");
    });
  });
}
