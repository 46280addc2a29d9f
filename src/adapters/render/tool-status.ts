/**
 * The status lines of a run: one per tool call, `🔧 name summary — state duration`, e.g.
 * "🔧 **bash** `ls -la` ✅ 0.4 s". Pure formatting; the renderer decides when to show them.
 */

export interface ToolLine {
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  startedAt: number;
  endedAt?: number;
  isError?: boolean;
  /** Ended because the run was stopped before the tool finished. */
  cancelled?: boolean;
}

/** Argument names whose value best says what a call does, in order of preference. */
const TELLING_ARGS = [
  "command",
  "cmd",
  "path",
  "file_path",
  "file",
  "url",
  "query",
  "pattern",
  "name",
  "prompt",
  "task",
];

/** A short one-line summary of a tool call's arguments (at most `max` characters). */
function summarizeArgs(args: Record<string, unknown>, max = 60): string {
  let value: unknown;
  for (const k of TELLING_ARGS) {
    if (typeof args[k] === "string" && args[k]) {
      value = args[k];
      break;
    }
  }
  if (value === undefined) value = Object.values(args).find((v) => typeof v === "string" && v);
  if (value === undefined) {
    const json = Object.keys(args).length ? JSON.stringify(args) : "";
    value = json ?? "";
  }
  const oneLine = String(value).replace(/\s+/g, " ").replace(/`/g, "'").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Seconds with one decimal below a minute, then minutes and seconds. */
function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** One line of markdown for a tool call. */
function formatToolLine(line: ToolLine): string {
  const summary = summarizeArgs(line.args);
  const head = `🔧 **${line.name.replace(/[*_`~]/g, "")}**${summary ? ` \`${summary}\`` : ""}`;
  if (line.endedAt === undefined) return `${head} ⏳`;
  const mark = line.cancelled ? "⏹️" : line.isError ? "❌" : "✅";
  return `${head} ${mark} ${formatDuration(line.endedAt - line.startedAt)}`;
}

/** All lines, in the order the calls started. */
export function formatToolStatus(lines: ToolLine[]): string {
  return lines.map(formatToolLine).join("\n");
}
