/**
 * Config problems as data: each names the path of the field (`channels.telegram.mode`,
 * `models.custom[0].api`) and says what was expected, so `switchboard check` can print them all.
 */

import { SwitchboardError } from "../../agent/errors.js";
import { editDistance } from "../../agent/llm/models.js";

/** One problem with the config. `path` is empty for problems with the file as a whole. */
export interface ConfigIssue {
  path: string;
  message: string;
  /** 1-based line in the config file, when the problem is in a file. */
  line?: number;
  column?: number;
  /** Lines of the file to show under the message (YAML syntax errors). */
  excerpt?: string[];
}

/**
 * `channels.telegram.mode (line 3): must be one of …`; a whole-file problem with a place reads
 * `line 4, column 2: YAML syntax: …` followed by the excerpt lines, indented by two spaces.
 */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line === undefined ? "" : `line ${issue.line}`;
  let head: string;
  if (issue.path) head = `${issue.path}${where ? ` (${where})` : ""}: ${issue.message}`;
  else if (where) head = `${where}${issue.column ? `, column ${issue.column}` : ""}: ${issue.message}`;
  else head = issue.message;
  return [head, ...(issue.excerpt ?? []).map((l) => `  ${l}`)].join("\n");
}

/** Thrown by `loadConfigOrThrow` with every issue found; the message lists them one per line. */
export class ConfigError extends SwitchboardError {
  constructor(
    readonly issues: readonly ConfigIssue[],
    readonly file: string | undefined,
  ) {
    const where = file ? ` in ${file}` : "";
    const lines = issues.map((i) => `  ${formatIssue(i).replace(/\n/g, "\n  ")}`).join("\n");
    super(
      "config.invalid",
      `Invalid configuration${where} (${issues.length} ${issues.length === 1 ? "problem" : "problems"}):\n${lines}`,
    );
  }
}

/** `a.b[2].c` from path segments. */
export function joinPath(segments: readonly (string | number)[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** The candidate closest to `name` when it is close enough to be a typo (case-insensitive). */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}
