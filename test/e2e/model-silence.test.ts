/**
 * A model that goes quiet, as a chat sees it: after `models.waitNoticeMs` of silence the answer says
 * it is still waiting for the model (under the text that arrived), and after `models.stallTimeoutMs`
 * the reply ends with an error saying the stream stalled, both as the config sets them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversation, waitForBot } from "./support/drivers.js";
import { until, World } from "./support/world.js";

let world: World;

beforeAll(async () => {
  world = await World.create({ redis: false });
  await world.start("all", { channels: ["telegram"], stallTimeoutMs: 3000, waitNoticeMs: 1000 });
});
afterAll(async () => {
  await world?.close();
});

describe("a model that stops sending", () => {
  it("gets a still-waiting note in chat, then ends with the configured stall timeout", async () => {
    const c = conversation(world, "telegram");
    world.llm.enqueue("openai-completions", {
      text: "The answer is forty-two.",
      fragmentSize: 10,
      stallAfterTokens: 1,
    });
    await c.start("what is the answer?");
    const shown = (text: string) =>
      world.telegram.calls.find((call) => call.visibleText?.includes(text))?.visibleText;
    const note = await until(() => shown("still waiting for the model"), "the still-waiting note");
    expect(note).toMatch(/^The answer\n\n⏳ still waiting for the model… \(\d+ s\)$/);
    await waitForBot(
      c,
      (m) => m.text === "⚠️ alpha (OpenAI-compatible) stream stalled: no data for 3 s",
      "the stall error",
    );
    // The note is gone from the answer, which keeps the text that arrived.
    await until(
      () => c.botMessages().some((m) => m.text === "The answer"),
      "the partial answer without the note",
    );
  });
});
