/**
 * knip: unused files, exports and dependencies, checked by `npm run check`.
 *
 * Entries are the programs (the CLI, scripts, the benchmark, spawned test processes and extension
 * fixtures loaded by path) and the engine's public API for programs that embed it (src/agent's
 * barrels, src/extensions/index.ts for extension authors); what nothing reaches from them is dead.
 * A type or interface used in its own file may stay exported (it is part of a signature).
 */
import type { KnipConfig } from "knip";

/**
 * Folders other work in progress is reshaping; knip reports their findings with `npm run knip:all`
 * but `npm run check` leaves them out until they are cleaned. Remove a line once `knip:all` shows
 * nothing in it.
 */
const NOT_YET_CLEAN = ["bench/**", "test/faults/**"];

const config: KnipConfig = {
  entry: [
    "src/agent/index.ts",
    "src/agent/llm/index.ts",
    "src/agent/session/index.ts",
    "src/extensions/index.ts",
    "scripts/*.{js,ts}",
    "bench/profile/*.ts",
    "test/faults/*.fault.ts",
    "test/**/fixtures/*.ts",
  ],
  project: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "scripts/*.{js,ts}"],
  ignoreBinaries: ["redis-server", "mkfifo"],
  // The protocol's reference MCP servers: tests start them by path inside the sandbox, not by import.
  ignoreDependencies: ["@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem"],
  ignoreExportsUsedInFile: { interface: true, type: true },
  ignore: process.env.KNIP_ALL ? [] : NOT_YET_CLEAN,
};

export default config;
