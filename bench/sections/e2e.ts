/**
 * End-to-end figures through the assembled product path (see lib/pipeline.ts), per mode:
 *
 * - latency phase: a fixed offered load of immediate replies across many private chats; inbound
 *   (the user's message enters the fake Bot API) → first outbound platform call for that chat, and
 *   inbound → LLM request; CPU-seconds per message of this process.
 * - streaming phase: 50 chats at once, each reply 200 tokens over 4 s; inbound → final text
 *   visible (all within 6 s?), stream end → final text visible, platform calls per reply, 429s,
 *   RSS under that load.
 */
import type { RecordedCall } from "../../test/fakes/telegram/server.js";
import { nowMs } from "../lib/paced-model.js";
import { type Mode, type Pipeline, startPipeline, until } from "../lib/pipeline.js";
import { percentile } from "../lib/stats.js";

export interface E2ESample {
  /** At a light load (`lightRatePerSec`): the path's own latency, without queueing. */
  lightFirstOutboundP50: number;
  lightLlmRequestP50: number;
  /** Light load, split: inbound → adapter received (polling hop), → deliver resolved, → LLM request. */
  lightPollHopP50: number;
  lightDeliverP50: number;
  lightWakeToLlmP50: number;
  firstOutboundP50: number;
  firstOutboundP99: number;
  firstOutboundMax: number;
  llmRequestP50: number;
  llmRequestP99: number;
  cpuMsPerMessage: number;
  offeredPerSec: number;
  achievedPerSec: number;
  messages: number;
  rssAfterStartMb: number;
  rssUnderLoadMb: number;
  streamAllFinalMs: number;
  streamEndToVisibleP50: number;
  streamEndToVisibleMax: number;
  callsPerReply: number;
  editsPerSecPerMessage: number;
  status429: number;
  errors: number;
}

export interface E2EConfig {
  /** Light load before the main phase (messages/s, for 3 s). */
  lightRatePerSec: number;
  ratePerSec: number;
  threads: number;
  seconds: number;
  streamChats: number;
  streamTokens: number;
  streamMs: number;
}

let tagSeq = 0;
const newTag = () => `m${++tagSeq}`;

function chatIdOf(c: RecordedCall): number {
  return Number(c.params.chat_id);
}

/** Index the bot's calls per chat, in time order. */
function callsByChat(calls: RecordedCall[]): Map<number, RecordedCall[]> {
  const m = new Map<number, RecordedCall[]>();
  for (const c of calls) {
    const id = chatIdOf(c);
    if (!Number.isFinite(id)) continue;
    const list = m.get(id) ?? [];
    list.push(c);
    m.set(id, list);
  }
  return m;
}

async function latencyPhase(
  p: Pipeline,
  cfg: Pick<E2EConfig, "ratePerSec" | "threads" | "seconds">,
  chatBase: number,
) {
  const sent: { tag: string; chat: number; at: number }[] = [];
  const total = Math.round(cfg.ratePerSec * cfg.seconds);
  const cpu0 = process.cpuUsage();
  const start = nowMs();
  let i = 0;
  while (i < total) {
    const due = start + (i * 1000) / cfg.ratePerSec;
    const wait = due - nowMs();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Inject everything that is due (the timer may fire late).
    while (i < total && start + (i * 1000) / cfg.ratePerSec <= nowMs() + 0.5) {
      const chat = chatBase + (i % cfg.threads);
      const tag = newTag();
      sent.push({ tag, chat, at: p.inject(chat, `hello [${tag}]`) });
      i++;
    }
  }
  const injectedIn = nowMs() - start;
  await until(() => sent.every((s) => p.model.endedAt.has(s.tag)), 60_000, "every latency-phase reply");
  const visible = () => {
    const texts = new Set(p.outbound().map((c) => c.visibleText ?? ""));
    // A message batched with a later one of its chat is answered by that one's reply.
    return sent.every((s) => texts.has(p.model.finalText.get(s.tag) ?? `ok [${s.tag}]`));
  };
  await until(visible, 60_000, "every latency-phase reply visible");
  const cpu = process.cpuUsage(cpu0);
  const byChat = callsByChat(p.outbound());
  const first: number[] = [];
  const llm: number[] = [];
  for (const s of sent) {
    const c = (byChat.get(s.chat) ?? []).find((x) => x.at >= s.at);
    if (c) first.push(c.at - s.at);
    const r = p.model.requestedAt.get(s.tag);
    if (r !== undefined) llm.push(r - s.at);
  }
  const hop: number[] = [];
  const deliver: number[] = [];
  const wake: number[] = [];
  for (const s of sent) {
    const rec = p.receivedAt.get(s.tag);
    const q = p.queuedAt.get(s.tag);
    const r = p.model.requestedAt.get(s.tag);
    if (rec !== undefined) hop.push(rec - s.at);
    if (rec !== undefined && q !== undefined) deliver.push(q - rec);
    if (q !== undefined && r !== undefined) wake.push(r - q);
  }
  return {
    pollHopP50: percentile(hop, 50),
    deliverP50: percentile(deliver, 50),
    wakeToLlmP50: percentile(wake, 50),
    firstOutboundP50: percentile(first, 50),
    firstOutboundP99: percentile(first, 99),
    firstOutboundMax: Math.max(...first),
    llmRequestP50: percentile(llm, 50),
    llmRequestP99: percentile(llm, 99),
    cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / total,
    offeredPerSec: cfg.ratePerSec,
    achievedPerSec: (total * 1000) / injectedIn,
    messages: total,
  };
}

async function streamingPhase(p: Pipeline, cfg: E2EConfig, chatBase: number) {
  const callsBefore = p.fake.calls.length;
  const sent: { tag: string; chat: number; at: number }[] = [];
  let rssPeak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 100);
  for (let i = 0; i < cfg.streamChats; i++) {
    const tag = newTag();
    const chat = chatBase + i;
    sent.push({
      tag,
      chat,
      at: p.inject(chat, `stream [${tag}] tokens=${cfg.streamTokens} ms=${cfg.streamMs}`),
    });
  }
  const finalAt = new Map<string, number>();
  const check = () => {
    const byChat = callsByChat(p.fake.calls.slice(callsBefore));
    for (const s of sent) {
      if (finalAt.has(s.tag)) continue;
      const text = p.model.finalText.get(s.tag);
      if (text === undefined) continue;
      const c = (byChat.get(s.chat) ?? []).find(
        (x) => x.status === 200 && x.visibleText?.trim() === text.trim(),
      );
      if (c) finalAt.set(s.tag, c.at);
    }
    return finalAt.size === sent.length;
  };
  try {
    await until(check, cfg.streamMs + 30_000, "every streamed reply to be final");
  } finally {
    clearInterval(sampler);
  }
  const calls = p.fake.calls.slice(callsBefore).filter((c) => sent.some((s) => s.chat === chatIdOf(c)));
  const endToVisible = sent.map(
    (s) => (finalAt.get(s.tag) as number) - (p.model.endedAt.get(s.tag) as number),
  );
  const edits = calls.filter((c) => c.method === "editMessageText" && c.status === 200).length;
  return {
    rssUnderLoadMb: rssPeak / 2 ** 20,
    streamAllFinalMs: Math.max(...sent.map((s) => (finalAt.get(s.tag) as number) - s.at)),
    streamEndToVisibleP50: percentile(endToVisible, 50),
    streamEndToVisibleMax: Math.max(...endToVisible),
    callsPerReply: calls.length / sent.length,
    editsPerSecPerMessage: edits / sent.length / (cfg.streamMs / 1000),
    status429: calls.filter((c) => c.status === 429).length,
  };
}

function withoutSplit<T extends { pollHopP50: number; deliverP50: number; wakeToLlmP50: number }>(
  x: T,
): Omit<T, "pollHopP50" | "deliverP50" | "wakeToLlmP50"> {
  const { pollHopP50: _a, deliverP50: _b, wakeToLlmP50: _c, ...rest } = x;
  return rest;
}

/** One run of both phases in `mode` on a fresh pipeline. */
export async function runE2E(mode: Mode, cfg: E2EConfig, redisUrl: string | undefined): Promise<E2ESample> {
  const p = await startPipeline({ mode, ...(redisUrl ? { redisUrl } : {}) });
  try {
    const rssAfterStartMb = process.memoryUsage().rss / 2 ** 20;
    // Warm-up: JIT, connections, first-session paths.
    const warm: string[] = [];
    for (let i = 0; i < 20; i++) {
      const tag = newTag();
      warm.push(tag);
      p.inject(900_000 + i, `warm [${tag}]`);
    }
    await until(() => warm.every((t) => p.model.endedAt.has(t)), 30_000, "warm-up replies");
    const light = await latencyPhase(
      p,
      { ratePerSec: cfg.lightRatePerSec, threads: cfg.threads, seconds: 3 },
      300_000,
    );
    const lat = await latencyPhase(p, cfg, 100_000);
    const str = await streamingPhase(p, cfg, 500_000);
    return {
      lightFirstOutboundP50: light.firstOutboundP50,
      lightLlmRequestP50: light.llmRequestP50,
      lightPollHopP50: light.pollHopP50,
      lightDeliverP50: light.deliverP50,
      lightWakeToLlmP50: light.wakeToLlmP50,
      ...withoutSplit(lat),
      ...str,
      rssAfterStartMb,
      errors: p.errors.length,
    };
  } finally {
    await p.close();
  }
}
