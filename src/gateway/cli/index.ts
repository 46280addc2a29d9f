/**
 * The `switchboard` command frame: argument parsing, help, `check`, and dispatch to the handlers the
 * wiring code supplies.
 */
export { parseCommandLine, UsageError } from "./args.js";
export { COMMANDS, type CommandName, helpText } from "./help.js";
export { runCli } from "./run.js";
export type * from "./types.js";
