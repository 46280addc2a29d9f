/**
 * A fake model (OpenAI completions wire) that makes the tool calls a chat message asks for: a
 * message ending in `run: [calls]` (JSON: `{name, args}` or `{command}` for bash) gets those calls;
 * after their results it says "done". And the tool results the model was sent for a message.
 */
import type { RecordedRequest, ScriptedReply } from "../../fakes/llm-server.js";
import { lastUserText, type World } from "./world.js";

type Message = { role: string; content: unknown };

/** The tool results at the end of `request` (after the last assistant message), if it ends with some. */
function trailingResults(request: RecordedRequest): string[] | undefined {
  const messages = (request.body.messages as Message[] | undefined) ?? [];
  if (messages.at(-1)?.role !== "tool") return undefined;
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "tool"; i--)
    out.unshift(String(messages[i]?.content));
  return out;
}

let seq = 0;

/** The fake model's script: `run: [calls]` makes those tool calls; after their results it says "done". */
export function toolScript(request: RecordedRequest): ScriptedReply {
  if (trailingResults(request)) return { text: "done" };
  const text = lastUserText(request);
  const m = /run: (\[.*\])\s*$/s.exec(text);
  if (!m?.[1]) return { text: `answers: ${text.split("\n").at(-1) ?? ""}` };
  const calls = JSON.parse(m[1]) as { name?: string; command?: string; args?: Record<string, unknown> }[];
  return {
    toolCalls: calls.map((c) => ({
      id: `call_${++seq}`,
      name: c.name ?? "bash",
      args: c.args ?? { command: c.command ?? "" },
    })),
  };
}

/** The tool results the model got for the message carrying `nonce`, once it got them. */
export function resultsFor(world: World, nonce: string): string[] | undefined {
  for (const r of world.requests("openai-completions")) {
    const messages = (r.body.messages as Message[] | undefined) ?? [];
    if (!messages.some((m) => m.role === "user" && JSON.stringify(m.content).includes(nonce))) continue;
    const results = trailingResults(r);
    if (results) return results;
  }
  return undefined;
}
