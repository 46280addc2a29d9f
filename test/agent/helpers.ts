/** Shared pieces of the agent tests: tools, messages and a readable summary of an event sequence. */
import { Type } from "@sinclair/typebox";
import type {
  Agent,
  AgentEvent,
  AgentMessage,
  AgentTool,
  ToolResultMessage,
  UserMessage,
} from "../../src/agent/index.js";
import type { Gate } from "../support/scripted-stream.js";

export function user(text: string): UserMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

/** One line per event, e.g. `message_end assistant(toolUse)`, `tool_end add error`; repeated updates collapse. */
export function summarize(events: AgentEvent[]): string[] {
  const lines: string[] = [];
  for (const e of events) {
    let line: string;
    switch (e.type) {
      case "message_start":
        line = `message_start ${role(e.message)}`;
        break;
      case "message_end":
        line = `message_end ${describe(e.message)}`;
        break;
      case "message_update":
        line = `update ${e.assistantMessageEvent.type}`;
        break;
      case "tool_execution_start":
        line = `tool_start ${e.toolCallId}`;
        break;
      case "tool_execution_update":
        line = `tool_update ${e.toolCallId}`;
        break;
      case "tool_execution_end":
        line = `tool_end ${e.toolCallId} ${e.isError ? "error" : "ok"}`;
        break;
      default:
        line = e.type;
    }
    if (line.startsWith("update ") && lines[lines.length - 1] === line) continue;
    lines.push(line);
  }
  return lines;
}

function role(m: AgentMessage): string {
  return (m as { role: string }).role;
}

function describe(m: AgentMessage): string {
  if (m.role === "assistant") return `assistant(${m.stopReason})`;
  if (m.role === "toolResult") return `toolResult(${m.toolCallId}${m.isError ? ", error" : ""})`;
  return m.role;
}

/** Records every event the agent emits from now on. */
export function record(agent: Agent): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.subscribe((e) => {
    events.push(e);
  });
  return events;
}

export function resultText(m: AgentMessage | undefined): string {
  if (m?.role !== "toolResult") throw new Error(`expected a tool result, got ${m ? role(m) : "nothing"}`);
  return (m as ToolResultMessage).content.map((c) => (c.type === "text" ? c.text : "[image]")).join("");
}

const addParameters = Type.Object({ a: Type.Number(), b: Type.Number() });

/** `add(a, b)`; records the arguments it received. */
export function addTool(received: unknown[] = []): AgentTool<typeof addParameters, { sum: number }> {
  return {
    name: "add",
    label: "Add",
    description: "Adds two numbers",
    parameters: addParameters,
    async execute(_id, params) {
      received.push(params);
      const sum = params.a + params.b;
      return { content: [{ type: "text", text: String(sum) }], details: { sum } };
    },
  };
}

const waitParameters = Type.Object({ label: Type.String() });

/**
 * `wait(label)`: arrives at `gates[label]` (when given) and finishes when it is released; with
 * `abortable`, an abort rejects it with "interrupted". Records the labels it ran, in order.
 */
export function waitTool(
  gates: Record<string, Gate> = {},
  ran: string[] = [],
  abortable = false,
): AgentTool<typeof waitParameters> {
  return {
    name: "wait",
    label: "Wait",
    description: "Waits for a signal",
    parameters: waitParameters,
    async execute(_id, params, signal) {
      ran.push(params.label);
      const gate = gates[params.label];
      if (gate) {
        const released = gate.arrive();
        if (abortable && signal) {
          await new Promise<void>((resolve, reject) => {
            if (signal.aborted) reject(new Error("interrupted"));
            signal.addEventListener("abort", () => reject(new Error("interrupted")), { once: true });
            released.then(resolve);
          });
        } else {
          await released;
        }
      }
      return { content: [{ type: "text", text: `waited ${params.label}` }], details: undefined };
    },
  };
}
