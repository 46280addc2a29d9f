/**
 * Memory per running thread, the figure `runtime.concurrency`'s default is sized by: an embedded
 * runtime runs `threads` agent runs at once, each streaming a 200-token reply over 4 s (a run
 * waiting on its model, as real runs mostly do). Heap (after forced GC) and RSS are read in the
 * middle of the streams and compared with the same process idle before; the difference divided
 * by the threads is what one running thread holds: its tenure, agent, session, the stream and the
 * reply so far (the platform renderer is not included: its sink is a no-op here).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { createPacedModel } from "../lib/paced-model.js";
import { pacedAgentFactory } from "../lib/pipeline.js";

export interface RunningMemorySample {
  heapKbPerThread: number;
  rssKbPerThread: number;
}

function gcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

let round = 0;

export async function memoryPerRunningThread(threads: number): Promise<RunningMemorySample> {
  const gc = gcFunction();
  const dir = mkdtempSync(join(tmpdir(), "sb-bench-running-"));
  const model = createPacedModel();
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    sinks: () => ({ onEvent() {}, onNotice() {}, close() {} }),
    agentFactory: pacedAgentFactory(model),
    concurrency: threads + 20,
  });
  await runtime.start();
  const r = ++round;
  const deliver = (i: number, text: string) =>
    runtime.deliver({
      platform: "web",
      threadKey: `web:run${r}:${i}`,
      eventId: `web:run${r}:${i}:${text.length}`,
      messageId: `web:run${r}:${i}`,
      channelId: "web",
      user: { id: "u1", name: "Ada", isBot: false },
      text,
      attachments: [],
      mentioned: true,
      isDirect: true,
      timestamp: Date.now(),
    });
  const waitFor = async (done: () => boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`running-memory bench: ${what} within 60 s`);
      await new Promise((res) => setTimeout(res, 10));
    }
  };
  try {
    // Warm-up: code paths, module state, one streamed reply.
    for (let i = 0; i < 10; i++)
      await deliver(1_000_000 + i, `warm [m${8_000_000 + r * 100 + i}] tokens=20 ms=200`);
    await waitFor(() => model.endedAt.size >= 10, "warm-up replies");
    gc();
    gc();
    const heap0 = process.memoryUsage().heapUsed;
    const rss0 = process.memoryUsage().rss;
    const base = 8_500_000 + r * 10_000;
    for (let i = 0; i < threads; i++) await deliver(i, `stream [m${base + i}] tokens=200 ms=4000`);
    await waitFor(() => model.requestedAt.size >= 10 + threads, "every run to start");
    // Halfway through the streams.
    await new Promise((res) => setTimeout(res, 1500));
    gc();
    gc();
    const heap1 = process.memoryUsage().heapUsed;
    const rss1 = process.memoryUsage().rss;
    await waitFor(() => model.endedAt.size >= 10 + threads, "every reply");
    return {
      heapKbPerThread: (heap1 - heap0) / 1024 / threads,
      rssKbPerThread: (rss1 - rss0) / 1024 / threads,
    };
  } finally {
    await runtime.stop({ graceMs: 0 });
    rmSync(dir, { recursive: true, force: true });
  }
}
