import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateEntryTokens, findCutPoint } from "../../src/agent/session/compaction/cut-point.js";
import { buildSessionContext } from "../../src/agent/session/context.js";
import { EntryChain } from "../../src/agent/session/entries.js";
import type { SessionEntry, SessionEntryInput } from "../../src/agent/session/types.js";
import { assistant, toolResult, user } from "./fixtures.js";

/** One step of a generated session, in the order it is appended. */
type Step =
  | { kind: "user"; size: number }
  | { kind: "assistant"; size: number; calls: number; answered: boolean[]; sizes: number[]; noise: boolean[] }
  | { kind: "noise" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("user" as const), size: fc.integer({ min: 1, max: 400 }) }),
  },
  {
    weight: 5,
    arbitrary: fc.integer({ min: 0, max: 3 }).chain((calls) =>
      fc.record({
        kind: fc.constant("assistant" as const),
        size: fc.integer({ min: 0, max: 400 }),
        calls: fc.constant(calls),
        // Mostly answered; an unanswered call is what a crashed run leaves behind.
        answered: fc.array(
          fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
          {
            minLength: calls,
            maxLength: calls,
          },
        ),
        sizes: fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: calls, maxLength: calls }),
        // A settings or extension entry between a call and its result.
        noise: fc.array(fc.boolean(), { minLength: calls, maxLength: calls }),
      }),
    ),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "noise" as const }) },
);

let callSeq = 0;
function build(steps: Step[]): SessionEntry[] {
  const chain = new EntryChain(null);
  const add = (input: SessionEntryInput) => chain.add(input);
  for (const s of steps) {
    if (s.kind === "user") add({ type: "message", message: user("u".repeat(s.size * 4)) });
    else if (s.kind === "noise") add({ type: "custom", customType: "ext", data: {} });
    else {
      const ids = Array.from({ length: s.calls }, () => `call${callSeq++}`);
      add({
        type: "message",
        message: assistant("a".repeat(s.size * 4), { toolCalls: ids.map((id) => ({ id, name: "bash" })) }),
      });
      ids.forEach((id, i) => {
        if (s.noise[i]) add({ type: "thinking_level_change", thinkingLevel: "low" });
        if (s.answered[i])
          add({ type: "message", message: toolResult(id, "r".repeat((s.sizes[i] ?? 1) * 4)) });
      });
    }
  }
  return chain.entries;
}

function callIndex(entries: SessionEntry[], callId: string): number {
  return entries.findIndex(
    (e) =>
      e.type === "message" &&
      e.message.role === "assistant" &&
      e.message.content.some((b) => b.type === "toolCall" && b.id === callId),
  );
}

describe("findCutPoint (property)", () => {
  it("never separates a tool call from its result and keeps at least the target", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 30_000 }),
        (steps, keep) => {
          const entries = build(steps);
          const cut = findCutPoint(entries, 0, entries.length, keep);
          const i = cut.firstKeptEntryIndex;
          expect(i).toBeGreaterThanOrEqual(0);
          expect(i).toBeLessThan(Math.max(1, entries.length));

          const first = entries[i];
          if (i > 0) expect(first?.type === "message" && first.message.role === "toolResult").toBe(false);
          for (let j = i; j < entries.length; j++) {
            const e = entries[j];
            if (e?.type === "message" && e.message.role === "toolResult") {
              const at = callIndex(entries, e.message.toolCallId);
              if (at >= 0) expect(at).toBeGreaterThanOrEqual(i);
            }
          }

          const total = entries.reduce((sum, e) => sum + estimateEntryTokens(e), 0);
          const kept = entries.slice(i).reduce((sum, e) => sum + estimateEntryTokens(e), 0);
          expect(kept).toBeGreaterThanOrEqual(Math.min(keep, total));

          if (cut.isSplitTurn) {
            expect(cut.turnStartIndex).toBeLessThan(i);
            const start = entries[cut.turnStartIndex];
            expect(start?.type === "message" && start.message.role === "user").toBe(true);
          }

          // After compacting there, no tool result of the kept part lost its call.
          const kept0 = entries[i];
          if (i > 0 && kept0) {
            const compacted = new EntryChain(entries[entries.length - 1]?.id ?? null).add({
              type: "compaction",
              summary: "s",
              firstKeptEntryId: kept0.id,
              tokensBefore: total,
            });
            const context = buildSessionContext([...entries, compacted]);
            const resultsKept = entries
              .slice(i)
              .filter((e) => e.type === "message" && e.message.role === "toolResult").length;
            expect(context.messages.filter((m) => m.role === "toolResult")).toHaveLength(resultsKept);
          }
        },
      ),
      { numRuns: 300, seed: 4242 },
    );
  });
});
