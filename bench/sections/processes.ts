/**
 * The product as deployed: the compiled `switchboard start --role gateway` and `--role worker` as
 * two processes on Redis, Telegram against the fake Bot API (long polling), the model behind the
 * fake LLM server (OpenAI-compatible wire API, a one-word reply). Both fakes live in this process
 * and stamp with one clock, so "inbound" is when the user's message enters the fake Bot API, the
 * first outbound call is the bot's first call for that chat (the gateway's typing indicator, sent
 * once the delivery is durable), and the LLM request is when the fake LLM server has it.
 *
 * - warm-up: `loadRate` messages/s for `warmSeconds`, not measured (V8 optimises the hot path).
 * - light phase: `lightRate` messages/s, each to a chat of its own, for `lightSeconds`; then one
 *   more message to each of those chats at the same rate (a chat's next message).
 * - CPU phase: `loadRate` messages/s for `loadSeconds`; CPU-seconds of the gateway and worker
 *   processes (from /proc, the fakes and this process excluded) divided by the messages.
 *
 * SB_BENCH_TRACE=<file> writes each light-phase message's stamps (inbound, LLM request, the bot's
 * calls; unix ms), to lay beside a Redis MONITOR trace.
 * SB_BENCH_LOG=<level> keeps both processes' logs at that level in $TMPDIR/sb-bench-{gateway,worker}.log;
 * SB_BENCH_PROF=<dir> writes a CPU profile of each (`npx tsx bench/profile/summarize.ts <file>`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RecordedRequest, startFakeLlmServer } from "../../test/fakes/llm-server.js";
import { FakeTelegram } from "../../test/fakes/telegram/server.js";
import { nowMs, TAG } from "../lib/paced-model.js";
import { chatOf, until } from "../lib/pipeline.js";
import { freePort } from "../lib/redis-server.js";
import { percentile } from "../lib/stats.js";
import { ensureBuilt } from "./launch.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin", "switchboard.js");
const SETUP = new Set(["getUpdates", "getMe", "deleteWebhook", "setWebhook", "setMyCommands"]);

export interface ProcessesConfig {
  /** Seconds at `loadRate` before anything is measured (the processes warm up). */
  warmSeconds: number;
  lightRate: number;
  lightSeconds: number;
  loadRate: number;
  loadSeconds: number;
}

export interface ProcessesSample {
  firstOutboundP50: number;
  llmRequestP50: number;
  /** inbound → the reply's text at the fake (sendMessage with the answer). */
  replyP50: number;
  /** The same two figures for a chat's next message (its thread idle, session and agent there). */
  nextFirstOutboundP50: number;
  nextLlmRequestP50: number;
  cpuPerMessage: number;
  gatewayCpuPerMessage: number;
  workerCpuPerMessage: number;
}

/** user + system CPU seconds of a process so far (Linux /proc; clock ticks of 10 ms). */
function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function lastUserText(request: RecordedRequest): string {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) return (m.content as { text?: string }[]).map((c) => c.text ?? "").join("");
  }
  return "";
}

interface Proc {
  child: ChildProcess;
  stderr: string[];
  stop(): Promise<void>;
}

function startRole(
  role: "gateway" | "worker",
  config: string,
  port: number,
  dir: string,
  token: string,
): Proc {
  // SB_BENCH_PROF=<dir>: each process writes a CPU profile there (bench/profile/summarize.ts reads it).
  const prof = process.env.SB_BENCH_PROF;
  const args = [
    ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
    BIN,
    ...["start", "--config", config, "--role", role, "--port", String(port)],
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, TELEGRAM_BOT_TOKEN: token },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The log (stdout) and errors, for a failure's message.
  const stderr: string[] = [];
  child.stdout?.on("data", (d: Buffer) => stderr.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}

let tagSeq = 0;
const newTag = () => `m${7_000_000 + ++tagSeq}`;

/** One run: fresh fakes, a fresh key prefix, both processes started and stopped. */
export async function runProcesses(redisUrl: string, cfg: ProcessesConfig): Promise<ProcessesSample> {
  ensureBuilt(() => {});
  const fake = await new FakeTelegram({ now: nowMs, privateRule: null, groupRule: null }).start();
  const llm = await startFakeLlmServer();
  const requestedAt = new Map<string, number>();
  llm.respondWith("openai-completions", (request) => {
    const tag = TAG.exec(lastUserText(request))?.[1] ?? "untagged";
    if (!requestedAt.has(tag)) requestedAt.set(tag, nowMs());
    return { text: `ok [${tag}]`, usage: { input: 10, output: 2 } };
  });
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-procs-"));
  const config = join(dir, "switchboard.yaml");
  writeFileSync(
    config,
    [
      "channels:",
      "  telegram:",
      `    apiRoot: ${fake.apiRoot()}`,
      "    dmPolicy: open",
      "models:",
      "  default: fake/one",
      "  custom:",
      "    - provider: fake",
      "      id: one",
      "      name: Fake One",
      "      api: openai-completions",
      `      baseUrl: ${llm.baseUrl("openai-completions")}`,
      "runtime:",
      `  redisUrl: ${redisUrl}`,
      `  keyPrefix: "sbp${Math.random().toString(36).slice(2, 8)}:"`,
      `  dataDir: ${join(dir, "data")}`,
      "agent:",
      `  workspaceDir: ${join(dir, "workspaces")}`,
      "logging:",
      `  level: ${process.env.SB_BENCH_LOG ?? "warn"}`,
      "",
    ].join("\n"),
  );
  const worker = startRole("worker", config, await freePort(), dir, fake.token);
  const gateway = startRole("gateway", config, await freePort(), dir, fake.token);
  const replied = (tag: string) => fake.calls.some((c) => c.visibleText === `ok [${tag}]`);
  try {
    await until(
      () => fake.calls.some((c) => c.method === "getUpdates"),
      // Launch takes 0.35 s on an idle machine; a shared one can take many times that.
      30_000,
      `the gateway to poll (${gateway.stderr.join("").slice(-300)})`,
    );
    let chat = 2_000_000 + Math.floor(Math.random() * 1000) * 1000;
    const send = (text: string, to?: number) => {
      const c = to ?? chat++;
      const at = nowMs();
      fake.userMessage({ ...chatOf(c), text });
      return { chat: c, at };
    };
    const warm = Array.from({ length: 10 }, () => newTag());
    for (const t of warm) send(`warm [${t}]`);
    await until(
      () => warm.every(replied),
      30_000,
      `warm-up replies (bot calls: ${[...new Set(fake.calls.map((c) => c.method))].join(" ")}; LLM requests: ${llm.requests.length}; gateway: ${gateway.stderr.join("").slice(-1500)}; worker: ${worker.stderr.join("").slice(-1500)})`,
    );

    /** `rate` messages/s for `seconds`, each to a new chat, or to each of `chats` in turn. */
    const phase = async (rate: number, seconds: number, chats?: number[]) => {
      const sent: { tag: string; chat: number; at: number }[] = [];
      const total = chats ? chats.length : Math.round(rate * seconds);
      const start = nowMs();
      for (let i = 0; i < total; i++) {
        const wait = start + (i * 1000) / rate - nowMs();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        const tag = newTag();
        sent.push({ tag, ...send(`hello [${tag}]`, chats?.[i]) });
      }
      await until(() => sent.every((s) => replied(s.tag)), 60_000, "every reply of the phase");
      return sent;
    };

    // A running gateway is warm: the latencies are the steady state's, not those of code V8 has
    // not optimised yet (a process 1 s after launch takes about twice as long per step).
    if (cfg.warmSeconds > 0) await phase(cfg.loadRate, cfg.warmSeconds);
    const light = await phase(cfg.lightRate, cfg.lightSeconds);
    const latencies = (sent: { tag: string; chat: number; at: number }[]) => {
      const first: number[] = [];
      const llmAt: number[] = [];
      const reply: number[] = [];
      for (const s of sent) {
        const calls = fake.calls.filter((c) => Number(c.params.chat_id) === s.chat && !SETUP.has(c.method));
        const c = calls.find((x) => x.at >= s.at);
        if (c) first.push(c.at - s.at);
        const r = calls.find((x) => x.visibleText === `ok [${s.tag}]`);
        if (r) reply.push(r.at - s.at);
        const q = requestedAt.get(s.tag);
        if (q !== undefined) llmAt.push(q - s.at);
      }
      return { first: percentile(first, 50), llm: percentile(llmAt, 50), reply: percentile(reply, 50) };
    };
    const opening = latencies(light);
    // The same chats again, at the same rate: each thread is idle, its session and agent exist.
    const next = latencies(
      await phase(
        cfg.lightRate,
        cfg.lightSeconds,
        light.map((s) => s.chat),
      ),
    );
    // SB_BENCH_TRACE=<file>: each light-phase message's stamps (unix ms), to lay beside a MONITOR trace.
    if (process.env.SB_BENCH_TRACE) {
      const stamps = light.map((s) => ({
        chat: s.chat,
        inbound: s.at,
        llm: requestedAt.get(s.tag),
        calls: fake.calls
          .filter((c) => Number(c.params.chat_id) === s.chat && !SETUP.has(c.method))
          .map((c) => ({ method: c.method, at: c.at })),
      }));
      writeFileSync(process.env.SB_BENCH_TRACE, JSON.stringify(stamps));
    }

    const g0 = cpuSeconds(gateway.child.pid);
    const w0 = cpuSeconds(worker.child.pid);
    const load = await phase(cfg.loadRate, cfg.loadSeconds);
    const g = cpuSeconds(gateway.child.pid) - g0;
    const w = cpuSeconds(worker.child.pid) - w0;
    return {
      firstOutboundP50: opening.first,
      llmRequestP50: opening.llm,
      replyP50: opening.reply,
      nextFirstOutboundP50: next.first,
      nextLlmRequestP50: next.llm,
      cpuPerMessage: (g + w) / load.length,
      gatewayCpuPerMessage: g / load.length,
      workerCpuPerMessage: w / load.length,
    };
  } finally {
    await gateway.stop();
    await worker.stop();
    if (process.env.SB_BENCH_LOG) {
      writeFileSync(join(tmpdir(), "sb-bench-gateway.log"), gateway.stderr.join(""));
      writeFileSync(join(tmpdir(), "sb-bench-worker.log"), worker.stderr.join(""));
    }
    await fake.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
