/**
 * Every model call a process makes is counted in `/metrics` (`switchboard_llm_tokens_total`,
 * `switchboard_llm_cost_usd_total`): a run's answers, a sub-agent's replies and compaction's summary
 * request, which go through the same one way to a model (src/gateway/app/llm-calls.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { conversation, waitForBot } from "./support/drivers.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create({ redis: false });
  app = await world.start("all", { channels: ["telegram"], keepRecentTokens: 1 });
});
afterAll(async () => {
  await world?.close();
});

/** The output tokens counted for `alpha/one` so far. */
async function outputTokens(): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => /^switchboard_llm_tokens_total\{[^}]*provider="alpha"[^}]*kind="output"/.test(l));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** Waits until the counter reads `n` (the count lands as the reply's stream ends, beside the render). */
async function counted(n: number): Promise<void> {
  let last = -1;
  const reads = async () => {
    last = await outputTokens();
    return last === n;
  };
  await until(reads, `${n} output tokens counted`, 10_000).catch(() => expect(last).toBe(n));
}

describe("LLM usage metrics", () => {
  it("count a sub-agent's tokens and compaction's summary request besides the run's answers", async () => {
    const c = conversation(world, "telegram");
    const before = await outputTokens();
    world.llm.enqueue("openai-completions", [
      // The thread's agent hands the task to a sub-agent…
      {
        toolCalls: [{ id: "call_sub", name: "spawn_sub_agent", args: { task: "count the files" } }],
        usage: { input: 100, output: 7 },
      },
      // …which answers (its own request, on the same model)…
      { text: "there are 3 files", usage: { input: 200, output: 11 } },
      // …and the agent reports the result.
      { text: "The sub-agent found 3 files.", usage: { input: 300, output: 13 } },
    ]);
    await c.start("how many files? use a sub-agent");
    await waitForBot(c, (m) => m.text === "The sub-agent found 3 files.", "the answer after the sub-agent");
    await counted(before + 7 + 11 + 13);

    world.llm.enqueue("openai-completions", {
      text: "## Goal\nCount files.",
      usage: { input: 400, output: 17 },
    });
    await c.command("compact");
    await waitForBot(c, (m) => m.text.includes("Compacted the conversation"), "the compaction notice");
    await counted(before + 7 + 11 + 13 + 17);
  });
});
