/**
 * The `switchboard` command frame: argument parsing, help, `check`, and dispatch to the handlers the
 * wiring code supplies.
 */
export { type ParsedCommand, parseCommandLine, UsageError } from "./args.js";
export { summarizeConfig } from "./check.js";
export { COMMANDS, type CommandName, helpText } from "./help.js";
export { parseSessionFile, runCli } from "./run.js";
export type * from "./types.js";
export { COMMAND_PLATFORMS, EXIT, ROLES } from "./types.js";
