/**
 * The wiring: one Switchboard process built from the config (`createGateway`), and the CLI's
 * command handlers over it (`createCliHandlers`). `src/main.ts` is the entry point.
 */
export { createCliHandlers } from "./cli-handlers.js";
export { createGateway, type Gateway } from "./gateway.js";
