/**
 * The agent message kinds that sessions add to the history, and the conversion that lets the
 * model see them: each becomes a user message.
 */
import type { ImageContent, Message, TextContent, UserMessage } from "../llm/types.js";
import type { AgentMessage } from "../types.js";

/** The summary that stands in for the compacted part of a conversation. */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** The summary of a branch the conversation returned from. */
export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

/**
 * A shell command a user ran in pi (`!cmd`, or `!!cmd` for one kept out of the model's context).
 * Switchboard never writes these; it reads them from imported pi sessions and shows them to the
 * model as pi does.
 */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  timestamp: number;
  /** True for `!!` commands: kept in the session, never sent to the model. */
  excludeFromContext?: boolean;
}

/** A message injected by an extension (`custom_message` entries); `details` never reaches the model. */
export interface CustomMessage<T = unknown> {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
  timestamp: number;
}

declare module "../types.js" {
  interface CustomAgentMessages {
    compactionSummary: CompactionSummaryMessage;
    branchSummary: BranchSummaryMessage;
    custom: CustomMessage;
    bashExecution: BashExecutionMessage;
  }
}

// The wrappers are pi's, word for word, so a session reads the same to the model in both.
export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
export const BRANCH_SUMMARY_PREFIX =
  "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
export const BRANCH_SUMMARY_SUFFIX = "</summary>";

/**
 * What the model reads for a user-run shell command, as pi writes it: "Ran `cmd`", the output in
 * a fence (or "(no output)"), then whether it was cancelled or failed, and where a truncated
 * output was saved.
 */
export function bashExecutionToText(message: BashExecutionMessage): string {
  const parts = [`Ran \`${message.command}\`\n`];
  parts.push(message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)");
  // A file may hold null for a command that never exited; only a real non-zero code is reported.
  const code: unknown = message.exitCode;
  if (message.cancelled) parts.push("\n\n(command cancelled)");
  else if (code !== null && code !== undefined && code !== 0)
    parts.push(`\n\nCommand exited with code ${String(code)}`);
  if (message.truncated && message.fullOutputPath)
    parts.push(`\n\n[Output truncated. Full output: ${message.fullOutputPath}]`);
  return parts.join("");
}

function toMillis(isoTimestamp: string): number {
  const t = Date.parse(isoTimestamp);
  return Number.isNaN(t) ? 0 : t;
}

export function createCompactionSummaryMessage(
  summary: string,
  tokensBefore: number,
  timestamp: string,
): CompactionSummaryMessage {
  return { role: "compactionSummary", summary, tokensBefore, timestamp: toMillis(timestamp) };
}

export function createBranchSummaryMessage(
  summary: string,
  fromId: string,
  timestamp: string,
): BranchSummaryMessage {
  return { role: "branchSummary", summary, fromId, timestamp: toMillis(timestamp) };
}

export function createCustomMessage(
  customType: string,
  content: string | (TextContent | ImageContent)[],
  display: boolean,
  details: unknown,
  timestamp: string,
): CustomMessage {
  const message: CustomMessage = {
    role: "custom",
    customType,
    content,
    display,
    timestamp: toMillis(timestamp),
  };
  if (details !== undefined) message.details = details;
  return message;
}

function userText(text: string, timestamp: number): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

/**
 * Converts one agent message to what the LLM understands, exactly as pi's `convertToLlm` does: LLM
 * messages pass through, session kinds become user messages (summaries wrapped in `<summary>`
 * tags, a user-run shell command as "Ran `cmd`" with its output), and `bashExecution` messages
 * marked `excludeFromContext` and kinds this module does not know are dropped (returns
 * undefined), since a provider could not send them anyway.
 */
export function sessionMessageToLlm(message: AgentMessage): Message | undefined {
  switch (message.role) {
    case "user":
    case "assistant":
    case "toolResult":
      return message;
    case "compactionSummary":
      return userText(
        COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX,
        message.timestamp,
      );
    case "branchSummary":
      return userText(BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX, message.timestamp);
    case "bashExecution":
      return message.excludeFromContext
        ? undefined
        : userText(bashExecutionToText(message), message.timestamp);
    case "custom": {
      const content =
        typeof message.content === "string"
          ? [{ type: "text" as const, text: message.content }]
          : message.content;
      return { role: "user", content, timestamp: message.timestamp };
    }
    default:
      return undefined;
  }
}

/**
 * `convertToLlm` for agents whose history comes from a session: every message through
 * `sessionMessageToLlm`, unknown kinds dropped. Tool calls and their results stay paired because
 * neither is ever dropped.
 */
export function convertToLlm(messages: AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const converted = sessionMessageToLlm(m);
    if (converted) out.push(converted);
  }
  return out;
}
