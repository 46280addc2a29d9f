/**
 * Which calls need approval: a tool's declared `approval` rule (or an override from config), bash
 * commands matching configured patterns, and the fingerprint that identifies an exact call for ♾️.
 */
import { createHash } from "node:crypto";
import type { ApprovalRule } from "../types.js";

/** JSON with object keys sorted at every level, so equal arguments give equal text. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Identifies one exact call: the tool and its arguments (key order does not matter). */
export function callFingerprint(toolName: string, args: Record<string, unknown>): string {
  return `${toolName}:${createHash("sha256").update(stableJson(args)).digest("hex").slice(0, 32)}`;
}

/**
 * A rule for `bash`: ask when the command matches any of `patterns` (regular expressions, as
 * strings from config or `RegExp`s). Throws at configuration time for a pattern that does not
 * compile, naming it.
 */
export function bashApprovalRule(patterns: readonly (string | RegExp)[]): ApprovalRule {
  const compiled = patterns.map((p) => {
    if (p instanceof RegExp) return p;
    try {
      return new RegExp(p);
    } catch (e) {
      throw new Error(
        `Approval pattern ${JSON.stringify(p)} is not a valid regular expression: ${(e as Error).message}`,
      );
    }
  });
  if (compiled.length === 0) return "never";
  return (args) => {
    const command = typeof args.command === "string" ? args.command : "";
    return compiled.some((re) => {
      re.lastIndex = 0;
      return re.test(command);
    });
  };
}

/**
 * Whether a call with `args` needs approval under `rule` (absent: never). A rule function that
 * throws counts as "ask": when in doubt, a human decides.
 */
export function needsApproval(rule: ApprovalRule | undefined, args: Record<string, unknown>): boolean {
  if (rule === undefined || rule === "never") return false;
  if (rule === "always") return true;
  try {
    return rule(args);
  } catch {
    return true;
  }
}
