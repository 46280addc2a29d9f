/**
 * Making the summary of a prepared compaction with one or two `complete()` calls.
 */
import { complete } from "../../llm/stream.js";
import type { AssistantMessage, Context, Model, SimpleStreamOptions, Usage } from "../../llm/types.js";
import { emptyUsage } from "../../llm/usage.js";
import type { AgentMessage } from "../../types.js";
import { convertToLlm } from "../messages.js";
import type { CompactionDetails, CompactionEntry, SessionEntryInput } from "../types.js";
import { fileLists, formatFileLists } from "./file-ops.js";
import type { CompactionPreparation } from "./prepare.js";
import {
  buildSummaryRequestText,
  SUMMARY_SYSTEM_PROMPT,
  serializeConversation,
  TURN_PREFIX_PROMPT,
} from "./prompts.js";

/** `complete()` or a stand-in with its signature (tests, a different engine). */
export type CompleteFn = (
  model: Model,
  context: Context,
  options?: SimpleStreamOptions,
) => Promise<AssistantMessage>;

export interface CompactOptions extends Omit<SimpleStreamOptions, "maxTokens"> {
  /** The `/compact` argument: what the summary should pay particular attention to. */
  customInstructions?: string;
}

/** The data of a compaction entry (the caller gives it an id and parent). */
export interface CompactionData {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details: CompactionDetails;
}

/** What `compact` made: the compaction entry's data, or why the summary failed (data, never a throw). */
export type CompactionResult =
  | { ok: true; compaction: CompactionData; usage: Usage }
  | {
      ok: false;
      /** Why the summary could not be made (the provider's `errorMessage`; never a credential). */
      errorMessage: string;
      aborted: boolean;
      usage: Usage;
    };

function addUsage(total: Usage, u: Usage): void {
  total.input += u.input;
  total.output += u.output;
  total.cacheRead += u.cacheRead;
  total.cacheWrite += u.cacheWrite;
  total.totalTokens += u.totalTokens;
  total.cost.input += u.cost.input;
  total.cost.output += u.cost.output;
  total.cost.cacheRead += u.cost.cacheRead;
  total.cost.cacheWrite += u.cost.cacheWrite;
  total.cost.total += u.cost.total;
}

type SummaryResult = { ok: true; text: string } | { ok: false; errorMessage: string; aborted: boolean };

async function summarise(
  completeFn: CompleteFn,
  model: Model,
  messages: readonly AgentMessage[],
  instructionsText: (transcript: string) => string,
  maxTokens: number,
  options: SimpleStreamOptions,
  usage: Usage,
): Promise<SummaryResult> {
  const transcript = serializeConversation(convertToLlm([...messages]));
  const context: Context = {
    systemPrompt: SUMMARY_SYSTEM_PROMPT,
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: instructionsText(transcript) }],
        timestamp: Date.now(),
      },
    ],
  };
  const reply = await completeFn(model, context, { ...options, maxTokens });
  addUsage(usage, reply.usage);
  if (reply.stopReason === "error" || reply.stopReason === "aborted") {
    return {
      ok: false,
      errorMessage: reply.errorMessage ?? `the model ended with stopReason "${reply.stopReason}"`,
      aborted: reply.stopReason === "aborted",
    };
  }
  const text = reply.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n")
    .trim();
  if (!text) return { ok: false, errorMessage: "the model returned an empty summary", aborted: false };
  return { ok: true, text };
}

/**
 * Makes the summary for `preparation` with `model` and returns the compaction entry's data.
 *
 * The history goes to the model as a transcript with the structured summary prompt, or, when the
 * branch was compacted before, the update prompt that merges into `previousSummary`. A split turn
 * gets a second request for the turn's beginning; the two summaries are joined. The files read
 * and modified are appended to the summary and kept in `details` (pi's fields). Requests run one
 * after the other, with `maxTokens` of 80% (history) and 50% (turn prefix) of `reserveTokens`.
 *
 * Model failures are data: `{ ok: false, errorMessage }` (nothing should be written then). Throws
 * only what `completeFn` throws (a programmer error such as an unregistered provider).
 */
export async function compact(
  preparation: CompactionPreparation,
  model: Model,
  options: CompactOptions = {},
  completeFn: CompleteFn = complete,
): Promise<CompactionResult> {
  const { customInstructions, ...streamOptions } = options;
  const { settings, previousSummary } = preparation;
  const usage = emptyUsage();

  let history: string;
  if (preparation.messagesToSummarize.length > 0) {
    const r = await summarise(
      completeFn,
      model,
      preparation.messagesToSummarize,
      (t) => buildSummaryRequestText(t, previousSummary, customInstructions),
      Math.floor(0.8 * settings.reserveTokens),
      streamOptions,
      usage,
    );
    if (!r.ok) return { ...r, usage };
    history = r.text;
  } else {
    history = previousSummary ?? "No earlier history.";
  }

  let summary = history;
  if (preparation.isSplitTurn && preparation.turnPrefixMessages.length > 0) {
    const r = await summarise(
      completeFn,
      model,
      preparation.turnPrefixMessages,
      (t) => `<conversation>\n${t}\n</conversation>\n\n${TURN_PREFIX_PROMPT}`,
      Math.floor(0.5 * settings.reserveTokens),
      streamOptions,
      usage,
    );
    if (!r.ok) return { ...r, usage };
    summary = `${history}\n\n---\n\n**The current turn so far (its end is kept below):**\n\n${r.text}`;
  }

  const { readFiles, modifiedFiles } = fileLists(preparation.fileOps);
  summary += formatFileLists(readFiles, modifiedFiles);
  const details: CompactionDetails = { readFiles, modifiedFiles };
  return {
    ok: true,
    compaction: {
      summary,
      firstKeptEntryId: preparation.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      details,
    },
    usage,
  };
}

/** The entry input for `EntryChain.add` from a compaction's data. */
export function compactionEntryInput(
  data: CompactionData,
): SessionEntryInput & Omit<CompactionEntry, "id" | "parentId" | "timestamp"> {
  return { type: "compaction", ...data };
}
