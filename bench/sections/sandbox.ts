/**
 * The tool sandbox's cost per bash call: the same command (`true`, and a short pipeline) run through
 * the direct runner (no sandbox) and through the bubblewrap runner, interleaved call by call so load
 * on the machine hits both alike. The figure with a target is the difference of the medians. Wall
 * time on a busy machine is mostly waiting for a CPU, so the CPU time the calls' processes used
 * (user + system, from the bench process's reaped children in /proc/self/stat) is reported too.
 * When bubblewrap cannot run here, the section says so and adds no figures.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { chown } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CommandRunner,
  createDirectRunner,
  DEFAULT_LIMITS,
  probeSandbox,
} from "../../src/extensions/tools/index.js";
import { median } from "../lib/stats.js";
import { addFigure, repeat, type Section } from "./index.js";

async function timeCall(runner: CommandRunner, command: string, workspace: string): Promise<number> {
  const t0 = performance.now();
  const r = await runner.run(command, { workspace, timeoutMs: 30_000, onOutput: () => {} });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0)
    throw new Error(`${runner.kind}: "${command}" exited ${r.exitCode} ${r.setupError ?? ""}`);
  return ms;
}

/** CPU time of this process's reaped children so far (cutime + cstime), in ms; NaN off Linux. */
function childrenCpuMs(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command name: field 3 is state, so cutime (16) and cstime (17) are at 13 and 14.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** CPU ms per call of `runner` over `n` calls of `command`. */
async function cpuPerCall(runner: CommandRunner, command: string, ws: string, n: number): Promise<number> {
  const before = childrenCpuMs();
  for (let i = 0; i < n; i++) await timeCall(runner, command, ws);
  return (childrenCpuMs() - before) / n;
}

interface SandboxSample {
  direct: number;
  bwrap: number;
  cost: number;
  directPipeline: number;
  bwrapPipeline: number;
  directCpu: number;
  bwrapCpu: number;
}

export const sandboxSection: Section = {
  id: "sandbox",
  title: "tool sandbox: one bash call with and without bubblewrap (same command, interleaved)",
  async run(ctx) {
    const root = mkdtempSync(join(tmpdir(), "sb-bench-sandbox-"));
    chmodSync(root, 0o755);
    const status = await probeSandbox({
      sandbox: { mode: "auto", network: "none", env: [], readOnlyPaths: [], limits: DEFAULT_LIMITS },
      workspaceRoot: root,
    });
    try {
      if (!status.sandboxed) {
        ctx.log(`skipped: ${status.summary}`);
        return;
      }
      ctx.log(status.summary);
      const ws = join(root, "ws");
      mkdirSync(ws);
      if (status.runner.owner) await chown(ws, status.runner.owner.uid, status.runner.owner.gid);
      const direct = createDirectRunner();
      const calls = ctx.quick ? 20 : 60;
      const pipeline = "ls -la /usr/bin | grep -c sh | wc -l";
      // Warm both (page cache, the /etc copy) before measuring.
      for (let i = 0; i < 3; i++) {
        await timeCall(direct, "true", ws);
        await timeCall(status.runner, "true", ws);
      }
      const samples = await repeat<SandboxSample>(ctx, ctx.quick ? 1 : 3, async () => {
        const d: number[] = [];
        const b: number[] = [];
        const dp: number[] = [];
        const bp: number[] = [];
        for (let i = 0; i < calls; i++) {
          d.push(await timeCall(direct, "true", ws));
          b.push(await timeCall(status.runner, "true", ws));
          if (i % 4 === 0) {
            dp.push(await timeCall(direct, pipeline, ws));
            bp.push(await timeCall(status.runner, pipeline, ws));
          }
        }
        const directCpu = await cpuPerCall(direct, "true", ws, calls);
        const bwrapCpu = await cpuPerCall(status.runner, "true", ws, calls);
        return {
          direct: median(d),
          bwrap: median(b),
          cost: median(b) - median(d),
          directPipeline: median(dp),
          bwrapPipeline: median(bp),
          directCpu,
          bwrapCpu,
        };
      });
      addFigure(ctx, "sandbox", samples, (x) => x.direct, {
        name: "bash call `true`, no sandbox (median)",
        unit: "ms",
      });
      addFigure(ctx, "sandbox", samples, (x) => x.bwrap, {
        name: "bash call `true`, bubblewrap sandbox (median)",
        unit: "ms",
      });
      addFigure(ctx, "sandbox", samples, (x) => x.cost, {
        name: "sandbox cost per bash call (difference of medians)",
        unit: "ms",
        target: { op: "<=", value: 10 },
      });
      addFigure(ctx, "sandbox", samples, (x) => x.directCpu, {
        name: "CPU per bash call `true`, no sandbox (processes' user + system)",
        unit: "ms",
      });
      addFigure(ctx, "sandbox", samples, (x) => x.bwrapCpu, {
        name: "CPU per bash call `true`, bubblewrap sandbox (processes' user + system)",
        unit: "ms",
      });
      addFigure(ctx, "sandbox", samples, (x) => x.directPipeline, {
        name: "bash call with a 3-process pipeline, no sandbox",
        unit: "ms",
      });
      addFigure(ctx, "sandbox", samples, (x) => x.bwrapPipeline, {
        name: "bash call with a 3-process pipeline, bubblewrap sandbox",
        unit: "ms",
      });
    } finally {
      status.runner.close?.();
      rmSync(root, { recursive: true, force: true });
    }
  },
};
