/**
 * The bench's sections in the order they run. Each section runs its measurement several times
 * (once with `--quick`) and adds one `Figure` per number: median, min and max over the runs.
 */
import type { Figure } from "../lib/stats.js";
import { summarize } from "../lib/stats.js";
import { type CommandSample, runCommandCount } from "./commands.js";
import { type E2EConfig, type E2ESample, runE2E } from "./e2e.js";
import { MICRO_SECTIONS } from "./micro.js";
import { runProcesses } from "./processes.js";
import { runRouting } from "./routing.js";
import { memoryPerRunningThread } from "./running-memory.js";
import { sandboxSection } from "./sandbox.js";
import { runScaleOut } from "./scaleout.js";

export interface SectionContext {
  quick: boolean;
  redisUrl: string;
  redisPid?: number;
  log(text: string): void;
  add(figure: Figure): void;
}

export interface Section {
  id: string;
  title: string;
  run(ctx: SectionContext): Promise<void>;
}

/** Runs `sample` `runs` times and adds one figure per selected key. */
export async function repeat<T>(
  ctx: SectionContext,
  runs: number,
  sample: (i: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await sample(i);
    ctx.log(
      `run ${i + 1}/${runs}: ${JSON.stringify(s, (_k, v) => (typeof v === "number" ? Number(v.toPrecision(4)) : v))}`,
    );
    out.push(s);
  }
  return out;
}

export function addFigure<T>(
  ctx: SectionContext,
  section: string,
  samples: T[],
  pick: (s: T) => number,
  f: Omit<Figure, "section" | "summary">,
): void {
  ctx.add({ section, summary: summarize(samples.map(pick)), ...f });
}

const e2eSection = (mode: "redis" | "embedded"): Section => ({
  id: mode === "redis" ? "e2e-redis" : "e2e-embedded",
  title: `inbound → outbound through the Telegram pipeline, ${mode} mode`,
  async run(ctx) {
    const cfg: E2EConfig = ctx.quick
      ? {
          lightRatePerSec: 10,
          ratePerSec: 100,
          threads: 200,
          seconds: 2,
          streamChats: 50,
          streamTokens: 200,
          streamMs: 4000,
        }
      : {
          lightRatePerSec: 10,
          ratePerSec: 100,
          threads: 200,
          seconds: 5,
          streamChats: 50,
          streamTokens: 200,
          streamMs: 4000,
        };
    ctx.log(
      `offered load ${cfg.ratePerSec} msg/s across ${cfg.threads} private chats for ${cfg.seconds} s; then ${cfg.streamChats} chats streaming ${cfg.streamTokens} tokens over ${cfg.streamMs / 1000} s`,
    );
    const samples = await repeat<E2ESample>(ctx, ctx.quick ? 1 : 3, () =>
      runE2E(mode, cfg, mode === "redis" ? ctx.redisUrl : undefined),
    );
    const s = mode;
    const t = mode === "redis";
    addFigure(ctx, s, samples, (x) => x.lightFirstOutboundP50, {
      name: `inbound → first outbound call p50 @ ${cfg.lightRatePerSec} msg/s`,
      unit: "ms",
      ...(t ? { target: { op: "<=", value: 5 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.lightLlmRequestP50, {
      name: `inbound → LLM request p50 @ ${cfg.lightRatePerSec} msg/s`,
      unit: "ms",
      ...(t ? { target: { op: "<=", value: 10 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.lightPollHopP50, {
      name: `  of which: inbound → adapter hands it over (long-poll hop) p50 @ ${cfg.lightRatePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.lightDeliverP50, {
      name: `  of which: deliver() (durable + wake job) p50 @ ${cfg.lightRatePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.lightWakeToLlmP50, {
      name: `  of which: queued → LLM request (worker pick-up, lease, session) p50 @ ${cfg.lightRatePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.firstOutboundP50, {
      name: `inbound → first outbound call p50 @ ${cfg.ratePerSec} msg/s`,
      unit: "ms",
      ...(t ? { target: { op: "<=", value: 5 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.firstOutboundP99, {
      name: `inbound → first outbound call p99 @ ${cfg.ratePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.firstOutboundMax, {
      name: `inbound → first outbound call max @ ${cfg.ratePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.llmRequestP50, {
      name: `inbound → LLM request p50 @ ${cfg.ratePerSec} msg/s`,
      unit: "ms",
      ...(t ? { target: { op: "<=", value: 10 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.llmRequestP99, {
      name: `inbound → LLM request p99 @ ${cfg.ratePerSec} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.cpuMsPerMessage / 1000, {
      name: `CPU per message (gateway+worker+fakes, one process) @ ${cfg.ratePerSec} msg/s`,
      unit: "CPU-s",
      target: { op: "<=", value: 0.006 },
    });
    addFigure(ctx, s, samples, (x) => x.streamEndToVisibleP50, {
      name: "stream end → final text visible p50 (edit interval 1000 ms)",
      unit: "ms",
      ...(t ? { target: { op: "<=", value: 1000 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.streamEndToVisibleMax, {
      name: "stream end → final text visible max",
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.streamAllFinalMs / 1000, {
      name: "50 chats × 200 tokens/4 s, default config: last final text after",
      unit: "s",
      target: { op: "<=", value: 4.6 },
    });
    addFigure(ctx, s, samples, (x) => x.callsPerReply, {
      name: "platform calls per streamed reply",
      unit: "calls",
    });
    addFigure(ctx, s, samples, (x) => x.editsPerSecPerMessage, {
      name: "edits per second per streamed message",
      unit: "edits/s",
    });
    addFigure(ctx, s, samples, (x) => x.status429, { name: "429s seen during streaming", unit: "count" });
    addFigure(ctx, s, samples, (x) => x.rssAfterStartMb, {
      name: "RSS after start (bench process, fakes included)",
      unit: "MB",
      ...(t ? { target: { op: "<=", value: 120 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.rssUnderLoadMb, {
      name: "RSS under the 50-chat load (peak)",
      unit: "MB",
      ...(t ? { target: { op: "<=", value: 250 } } : {}),
    });
    addFigure(ctx, s, samples, (x) => x.errors, { name: "delivery errors", unit: "count" });
  },
});

const commandsSection: Section = {
  id: "commands",
  title: "Redis commands and Redis time per message (INFO commandstats, SLOWLOG, MONITOR around each phase)",
  async run(ctx) {
    const threads = ctx.quick ? 20 : 50;
    const samples = await repeat(ctx, ctx.quick ? 1 : 3, () => runCommandCount(ctx.redisUrl, threads, 4000));
    // Each kind of message: its executed commands, BullMQ's share, what was sent (with the target),
    // Redis's own time, and the scripts that took most of it.
    const kinds: {
      name: string;
      sentTarget?: number;
      of: (x: CommandSample) => [number, number, number, number];
      scripts: (x: CommandSample) => string;
    }[] = [
      {
        name: "a message that wakes an idle thread (a new one: its session created)",
        sentTarget: 20,
        of: (x) => [x.idleWake, x.idleWakeBull, x.idleWakeSent, x.idleWakeUsec],
        scripts: (x) => x.idleWakeScripts,
      },
      {
        name: "a message that wakes an idle thread that exists (a conversation going on)",
        sentTarget: 20,
        of: (x) => [x.idleExisting, x.idleExistingBull, x.idleExistingSent, x.idleExistingUsec],
        scripts: (x) => x.idleExistingScripts,
      },
      {
        name: "a message delivered into a running thread",
        sentTarget: 8,
        of: (x) => [x.intoRunning, x.intoRunningBull, x.intoRunningSent, x.intoRunningUsec],
        scripts: (x) => x.intoRunningScripts,
      },
    ];
    const last = samples[samples.length - 1];
    for (const [i, kind] of kinds.entries()) {
      addFigure(ctx, "commands", samples, (x) => kind.of(x)[0], {
        name: `Redis commands executed for ${kind.name}`,
        unit: "commands",
      });
      addFigure(ctx, "commands", samples, (x) => kind.of(x)[1], {
        name:
          i === 0
            ? "  of which BullMQ's job lifecycle (its floor: add, active, finished, polls)"
            : "  of which BullMQ's",
        unit: "commands",
      });
      addFigure(ctx, "commands", samples, (x) => kind.of(x)[2], {
        name:
          i === 0 ? "  commands sent for it (a script once, inner commands not)" : "  commands sent for it",
        unit: "commands",
        ...(kind.sentTarget !== undefined ? { target: { op: "<=" as const, value: kind.sentTarget } } : {}),
      });
      addFigure(ctx, "commands", samples, (x) => kind.of(x)[3], {
        name:
          i === 0
            ? "  Redis time for it (commandstats usec: every command sent, a script once, whole)"
            : "  Redis time for it",
        unit: "µs",
      });
      if (last) ctx.log(`heaviest scripts, ${kind.name} (last run, per message): ${kind.scripts(last)}`);
    }
  },
};

const processesSection: Section = {
  id: "processes",
  title: "compiled gateway + worker processes on Redis (fake Telegram, fake LLM)",
  async run(ctx) {
    const cfg = ctx.quick
      ? { warmSeconds: 2, lightRate: 10, lightSeconds: 3, loadRate: 50, loadSeconds: 2 }
      : { warmSeconds: 6, lightRate: 10, lightSeconds: 5, loadRate: 50, loadSeconds: 4 };
    ctx.log(
      `${cfg.loadRate} msg/s for ${cfg.warmSeconds} s (warm-up), ${cfg.lightRate} msg/s for ${cfg.lightSeconds} s (latency: each message to a chat of its own, then each of those chats once more), then ${cfg.loadRate} msg/s for ${cfg.loadSeconds} s (CPU, new chats)`,
    );
    const samples = await repeat(ctx, ctx.quick ? 1 : 3, () => runProcesses(ctx.redisUrl, cfg));
    const s = "processes";
    addFigure(ctx, s, samples, (x) => x.firstOutboundP50, {
      name: `inbound → first outbound call (gateway's typing) p50 @ ${cfg.lightRate} msg/s, a chat's first message`,
      unit: "ms",
      target: { op: "<=", value: 5 },
    });
    addFigure(ctx, s, samples, (x) => x.llmRequestP50, {
      name: `inbound → LLM request p50 @ ${cfg.lightRate} msg/s, a chat's first message`,
      unit: "ms",
      target: { op: "<=", value: 10 },
    });
    addFigure(ctx, s, samples, (x) => x.nextFirstOutboundP50, {
      name: `  a chat's next message: inbound → first outbound call p50 @ ${cfg.lightRate} msg/s`,
      unit: "ms",
      target: { op: "<=", value: 5 },
    });
    addFigure(ctx, s, samples, (x) => x.nextLlmRequestP50, {
      name: `  a chat's next message: inbound → LLM request p50 @ ${cfg.lightRate} msg/s`,
      unit: "ms",
      target: { op: "<=", value: 10 },
    });
    addFigure(ctx, s, samples, (x) => x.replyP50, {
      name: `inbound → reply text at the platform p50 @ ${cfg.lightRate} msg/s`,
      unit: "ms",
    });
    addFigure(ctx, s, samples, (x) => x.cpuPerMessage, {
      // Every message opens a thread of its own (a new session, a new agent): the target
      // (0.006) is for the end-to-end phase's steady traffic, reported by e2e-redis / e2e-embedded.
      name: `CPU per message that opens a thread, gateway + worker processes @ ${cfg.loadRate} msg/s`,
      unit: "CPU-s",
    });
    addFigure(ctx, s, samples, (x) => x.gatewayCpuPerMessage, {
      name: "  of which the gateway",
      unit: "CPU-s",
    });
    addFigure(ctx, s, samples, (x) => x.workerCpuPerMessage, {
      name: "  of which the worker",
      unit: "CPU-s",
    });
  },
};

export const SECTIONS: Section[] = [
  commandsSection,
  processesSection,
  e2eSection("redis"),
  e2eSection("embedded"),
  {
    id: "routing",
    title: "routing throughput of one gateway vs raw BullMQ add (same run)",
    async run(ctx) {
      const count = ctx.quick ? 1000 : 5000;
      const samples = await repeat(ctx, ctx.quick ? 1 : 3, () => runRouting(ctx.redisUrl, count));
      addFigure(ctx, "routing", samples, (x) => x.deliverPerSec, {
        name: "gateway deliver() (new thread each, 64 in flight)",
        unit: "msg/s",
      });
      addFigure(ctx, "routing", samples, (x) => x.bullAddPerSec, {
        name: "raw BullMQ Queue.add (64 in flight)",
        unit: "jobs/s",
      });
      addFigure(ctx, "routing", samples, (x) => x.ratio, { name: "deliver / raw add", unit: "×" });
    },
  },
  {
    id: "scaleout",
    title:
      "agent runs/s with 1 and 2 worker processes (I/O-bound model: replies streamed over 2 s; then immediate)",
    async run(ctx) {
      // 16 waves of 2 s for one worker, 8 for two: the ramp at both ends weighs little.
      const io = { count: ctx.quick ? 96 : 256, streamMs: 2000, concurrency: 16 };
      const ioSamples = await repeat(ctx, ctx.quick ? 1 : 3, () => runScaleOut(ctx.redisUrl, io));
      const s = "scaleout";
      addFigure(ctx, s, ioSamples, (x) => x.one, {
        name: `runs/s, 1 worker process (replies over 2 s, concurrency ${io.concurrency})`,
        unit: "runs/s",
      });
      addFigure(ctx, s, ioSamples, (x) => x.two, { name: "runs/s, 2 worker processes", unit: "runs/s" });
      addFigure(ctx, s, ioSamples, (x) => x.ratio, {
        name: "2 workers / 1 worker (I/O-bound)",
        unit: "×",
        target: { op: ">=", value: 1.8 },
      });
      const cpu = { count: ctx.quick ? 300 : 500, streamMs: 0, concurrency: 20 };
      const cpuSamples = await repeat(ctx, ctx.quick ? 1 : 3, () => runScaleOut(ctx.redisUrl, cpu));
      addFigure(ctx, s, cpuSamples, (x) => x.one, {
        name: "runs/s, 1 worker process (immediate model: CPU-bound)",
        unit: "runs/s",
      });
      addFigure(ctx, s, cpuSamples, (x) => x.two, { name: "runs/s, 2 worker processes", unit: "runs/s" });
      addFigure(ctx, s, cpuSamples, (x) => x.ratio, {
        name: "2 workers / 1 worker (CPU-bound: needs free cores)",
        unit: "×",
      });
    },
  },
  {
    id: "running",
    title: "memory per running thread (200 runs at once, each streaming its reply; embedded runtime)",
    async run(ctx) {
      const threads = ctx.quick ? 100 : 200;
      const samples = await repeat(ctx, ctx.quick ? 1 : 3, () => memoryPerRunningThread(threads));
      addFigure(ctx, "running", samples, (x) => x.heapKbPerThread, {
        name: `heap per running thread (${threads} at once, after GC)`,
        unit: "KB",
      });
      addFigure(ctx, "running", samples, (x) => x.rssKbPerThread, {
        name: `RSS per running thread (${threads} at once)`,
        unit: "KB",
      });
    },
  },
  ...MICRO_SECTIONS,
  sandboxSection,
];
