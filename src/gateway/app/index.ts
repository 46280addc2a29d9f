/**
 * The wiring: one Switchboard process built from the config (`createGateway`), and the CLI's
 * command handlers over it (`createCliHandlers`). `src/main.ts` is the entry point.
 */
export { createCliHandlers } from "./cli-handlers.js";
export { createGateway, type Gateway, type GatewayOptions } from "./gateway.js";
export {
  authorName,
  type ContextMessage,
  chatFormatter,
  contextBlock,
  messageText,
  ReplyTargets,
} from "./inbound-format.js";
export { instrumentAdapter } from "./instrument.js";
export { platformOf } from "./platforms.js";
