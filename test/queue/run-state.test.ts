/**
 * A run's own state machine (run-state.ts), row by row of its table: for each state, the read each
 * checkpoint makes and the state it leaves, the moves a reply and a stop make, and the moves that
 * are bugs (they throw). The run driver only carries these answers out.
 */
import { describe, expect, it } from "vitest";
import type { TakeOutcome } from "../../src/queue/state/types.js";
import { type CheckpointRead, type RunPhase, RunState } from "../../src/queue/worker/run-state.js";

const followUpMessage: TakeOutcome = { status: "taken", items: [] };

/** A machine in `phase`, reached by the moves a run makes to get there. */
function inPhase(phase: RunPhase): RunState {
  switch (phase) {
    case "starting":
      return new RunState("starting");
    case "answeringTail":
      return new RunState("answeringTail");
    case "working": {
      const s = new RunState("starting");
      s.read("steer");
      return s;
    }
    case "closing": {
      const s = inPhase("working");
      s.replied(false);
      return s;
    }
    case "holding": {
      const s = inPhase("closing");
      s.read("steer");
      s.afterTake(followUpMessage, false);
      return s;
    }
    case "aborted": {
      const s = new RunState("starting");
      s.abort();
      return s;
    }
  }
}

/** The table's rows: the read each checkpoint makes, and the state after it (no take found steering). */
const rows: [RunPhase, CheckpointRead, RunPhase, CheckpointRead, RunPhase][] = [
  // state          steering read                          after       follow-up read                          after
  ["starting", { read: "none" }, "working", { read: "take", rule: "followUp" }, "starting"],
  [
    "answeringTail",
    { read: "control" },
    "answeringTail",
    { read: "take", rule: "followUp" },
    "answeringTail",
  ],
  ["working", { read: "take", rule: "steer" }, "working", { read: "take", rule: "followUp" }, "working"],
  ["closing", { read: "take", rule: "followUp" }, "holding", { read: "take", rule: "followUp" }, "closing"],
  ["holding", { read: "none" }, "holding", { read: "held", take: followUpMessage }, "closing"],
  ["aborted", { read: "none" }, "aborted", { read: "none" }, "aborted"],
];

describe("run state: the read each checkpoint makes", () => {
  it.each(rows)(
    "%s: steering read and follow-up read",
    (phase, steer, afterSteer, followUp, afterFollowUp) => {
      const s = inPhase(phase);
      expect(s.read("steer")).toEqual(steer);
      if (steer.read === "take")
        expect(s.afterTake(followUpMessage, false)).toBe(afterSteer === "holding" ? "hold" : "deliver");
      expect(s.phase).toBe(afterSteer);

      const f = inPhase(phase);
      expect(f.read("followUp")).toEqual(followUp);
      if (followUp.read === "take") expect(f.afterTake(followUpMessage, false)).toBe("deliver");
      expect(f.phase).toBe(afterFollowUp);
    },
  );

  it("closing: a steering read whose take found steering messages delivers them at once", () => {
    const s = inPhase("closing");
    expect(s.read("steer")).toEqual({ read: "take", rule: "followUp" });
    expect(s.afterTake({ status: "taken", items: [] }, true)).toBe("deliver");
    expect(s.phase).toBe("closing");
  });

  it("holding: the follow-up read gets exactly the take the steering read held, once", () => {
    const s = inPhase("closing");
    const held: TakeOutcome = { status: "wait", waitMs: 40 };
    s.read("steer");
    expect(s.afterTake(held, false)).toBe("hold");
    expect(s.read("steer")).toEqual({ read: "none" });
    expect(s.read("followUp")).toEqual({ read: "held", take: held });
    expect(s.read("followUp")).toEqual({ read: "take", rule: "followUp" });
  });
});

describe("run state: replies and stops", () => {
  const replyRows: [RunPhase, RunPhase, RunPhase][] = [
    // state          reply asks tools   reply asks none
    ["starting", "working", "closing"],
    ["answeringTail", "working", "closing"],
    ["working", "working", "closing"],
    ["closing", "working", "closing"],
    ["holding", "holding", "holding"],
    ["aborted", "aborted", "aborted"],
  ];

  it.each(replyRows)("%s: a reply moves it by whether it asked for tools", (phase, tools, none) => {
    const a = inPhase(phase);
    a.replied(true);
    expect(a.phase).toBe(tools);
    const b = inPhase(phase);
    b.replied(false);
    expect(b.phase).toBe(none);
  });

  it.each(["starting", "answeringTail", "working", "closing", "holding"] as RunPhase[])(
    "%s: a stop aborts it, and every read after is none",
    (phase) => {
      const s = inPhase(phase);
      expect(s.abort()).toBe(true);
      expect(s.aborted).toBe(true);
      expect(s.read("steer")).toEqual({ read: "none" });
      expect(s.read("followUp")).toEqual({ read: "none" });
      expect(s.abort()).toBe(false);
    },
  );

  it("a run compacts and retries after an overflow once; a second retry is a bug", () => {
    const s = new RunState("starting");
    expect(s.mayRetryOverflow).toBe(true);
    s.retryOverflow();
    expect(s.mayRetryOverflow).toBe(false);
    expect(() => s.retryOverflow()).toThrow(/retried once already/);
  });

  it("an outcome reported for a take nobody asked for is a bug", () => {
    const s = inPhase("working");
    expect(() => s.afterTake(followUpMessage, false)).toThrow(/without a take under way/);
    s.read("steer");
    s.afterTake(followUpMessage, false);
    expect(() => s.afterTake(followUpMessage, false)).toThrow(/without a take under way/);
  });
});
