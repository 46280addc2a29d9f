/**
 * What `start` refuses in a schema-valid config, found the same way by `start` (createGateway
 * throws a `ConfigError` with these issues) and by `switchboard check`: a default model the
 * catalogue does not have, and tool names (per channel, and in `approval.tools`) that no loaded
 * extension registers. Each issue names the field and the closest valid values.
 */
import type { ExtensionRunner } from "../../extensions/runner.js";
import { type ConfigIssue, closest, joinPath } from "../config/errors.js";
import type { SwitchboardConfig } from "../config/types.js";
import { channelSlices } from "./platforms.js";

/** Every tool name the enabled extensions register (the built-in tools are an extension too). */
function registeredToolNames(runner: ExtensionRunner): string[] {
  return [...new Set(runner.enabled().flatMap((e) => e.tools.map((t) => t.name)))];
}

function unknownTools(
  names: readonly string[],
  known: readonly string[],
  at: (i: number) => string,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  names.forEach((name, i) => {
    if (known.includes(name)) return;
    const guess = closest(name, known);
    issues.push({
      path: at(i),
      message:
        `"${name}" is not a tool${guess ? `; did you mean "${guess}"?` : "."} ` +
        `The tools are ${known.join(", ")} (docs/tools.md)`,
    });
  });
  return issues;
}

/**
 * Tool names in `channels.<platform>.tools` and `approval.tools` that no enabled extension of
 * `runner` registers. A channel that lists an unknown tool would silently run without it.
 */
export function toolIssues(config: SwitchboardConfig, runner: ExtensionRunner): ConfigIssue[] {
  const known = registeredToolNames(runner);
  const issues: ConfigIssue[] = [];
  for (const [platform, { tools }] of channelSlices(config.channels)) {
    if (tools)
      issues.push(...unknownTools(tools, known, (i) => joinPath(["channels", platform, "tools", i])));
  }
  issues.push(...unknownTools(config.approval.tools, known, (i) => joinPath(["approval", "tools", i])));
  return issues;
}
