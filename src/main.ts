/**
 * Entry point of `switchboard` (and `npm start`): the CLI frame with the wiring's handlers. The
 * wiring loads on first use, so `--help` and `--version` answer without loading the runtime.
 */
import { runCli } from "./gateway/cli/index.js";
import type { CliHandlers } from "./gateway/cli/types.js";

let loaded: Promise<CliHandlers> | undefined;
const wiring = (): Promise<CliHandlers> => {
  loaded ??= import("./gateway/app/cli-handlers.js").then((m) => m.createCliHandlers());
  return loaded;
};

function missing(name: string): never {
  throw new Error(`the ${name} handler is missing from the wiring`);
}

const handlers: CliHandlers = {
  start: async (ctx) => ((await wiring()).start ?? missing("start"))(ctx),
  validateConfig: async (ctx) => ((await wiring()).validateConfig ?? missing("check"))(ctx),
  describeConfig: async (ctx) => ((await wiring()).describeConfig ?? missing("check"))(ctx),
  checkProbes: async (ctx) => ((await wiring()).checkProbes ?? missing("check"))(ctx),
  exportThread: async (ctx) => ((await wiring()).exportThread ?? missing("export"))(ctx),
  importSession: async (ctx) => ((await wiring()).importSession ?? missing("import"))(ctx),
  usage: async (ctx) => ((await wiring()).usage ?? missing("usage"))(ctx),
  registerCommands: async (ctx) => ((await wiring()).registerCommands ?? missing("register-commands"))(ctx),
};

process.exitCode = await runCli(process.argv.slice(2), { handlers });
