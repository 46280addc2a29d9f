/**
 * The deterministic model of the multi-process tests. Messages carry ids like `[t12.3]` and may ask
 * for a tool with `tool:<ms>`. The model calls the `work` tool when the last message is a user
 * message asking for one; otherwise it answers `ack <ids>` with the ids of every user message since
 * its last finished answer. So each accepted message is acknowledged by exactly one persisted
 * answer, however runs were steered, aborted or recovered.
 */
import { Type } from "@sinclair/typebox";
import type { Clock } from "../../../src/agent/clock.js";
import type { AgentMessage, AgentTool } from "../../../src/agent/types.js";
import type { RecordedStreamCall, ScriptedStreamReply } from "../../support/scripted-stream.js";
import { textOf } from "./harness.js";

const ID = /\[(t\d+\.\d+)\]/g;

/** The message ids in a text, in order. */
export function idsIn(text: string): string[] {
  return [...text.matchAll(ID)].map((m) => m[1] as string);
}

/** The ids a final answer acknowledges (none for anything else). */
export function ackedIds(m: AgentMessage): string[] {
  if (m.role !== "assistant" || m.stopReason !== "stop") return [];
  const text = textOf(m);
  return text.startsWith("ack ") ? text.slice(4).split(",").filter(Boolean) : [];
}

export function echoResponder(call: RecordedStreamCall): ScriptedStreamReply {
  const messages = call.context.messages;
  const last = messages[messages.length - 1];
  if (last?.role === "user") {
    const tool = /tool:(\d+)/.exec(textOf(last));
    if (tool) return { toolCalls: [{ name: "work", args: { ms: Number(tool[1]) } }] };
  }
  let i = messages.length - 1;
  while (i >= 0) {
    const m = messages[i];
    if (m?.role === "assistant" && m.stopReason === "stop") break;
    i--;
  }
  const ids = messages
    .slice(i + 1)
    .filter((m) => m.role === "user")
    .flatMap((m) => idsIn(textOf(m)));
  return { text: `ack ${ids.join(",")}` };
}

/** A tool that works for `ms` milliseconds of `clock`, or until its run is aborted. */
export function workTool(clock: Clock): AgentTool {
  return {
    name: "work",
    label: "work",
    description: "Works for a while.",
    parameters: Type.Object({ ms: Type.Number() }),
    async execute(_id, params, signal) {
      const ms = Number((params as { ms: number }).ms);
      await clock.sleep(ms, signal);
      return { content: [{ type: "text", text: `worked ${ms} ms` }], details: {} };
    },
  };
}
