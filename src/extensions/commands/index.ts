/**
 * The built-in commands, as an extension: `/model`, `/thinking` (`/think`), `/new`, `/compact`,
 * `/stop`, `/status`, `/tools`, `/steer`, `/followup`, `/help`. (`/approve` and `/deny` come with the
 * approval extension.) The gateway parses chat text with `parseCommandText` and native commands
 * with `parseNativeCommand`, then calls `ThreadExtensions.runCommand`.
 */
import type { ExtensionFactory } from "../types.js";
import { guardCommand } from "./guard.js";
import { registerInfoCommands, type ToolLines } from "./info-commands.js";
import { type ModelCommandOptions, registerModelCommands } from "./model-commands.js";
import { registerThreadCommands } from "./thread-commands.js";

export { parseCommandText, parseNativeCommand } from "./parser.js";

export interface CommandsExtensionOptions extends ModelCommandOptions {
  /** Extra `/status` lines of this process (how tool commands run). */
  statusLines?: () => string[];
  /** The lines of `/tools` (absent: no `/tools`). */
  toolLines?: ToolLines;
}

/** The commands extension; register it under the name `commands`. */
export function createCommandsExtension(options: CommandsExtensionOptions = {}): ExtensionFactory {
  return (api) => {
    registerModelCommands(api, options, guardCommand);
    registerThreadCommands(api, guardCommand);
    registerInfoCommands(api, guardCommand, options.statusLines, options.toolLines);
  };
}
