/** Platform-neutral rendering of agent runs into chat messages. */
export { type Clock, ManualClock, systemClock } from "./clock.js";
export { LiveMessage, type LiveMessageOptions, type LiveMessageOutcome } from "./live-message.js";
export {
  convertMarkdown,
  toDiscordMarkdown,
  toPlainText,
  toSlackMrkdwn,
  toTelegramHtml,
} from "./markdown.js";
export { gcraPenalize, gcraReserve, MemoryRateLimiter, unlimited } from "./rate-limiter.js";
export {
  briefError,
  createRendererFactory,
  type RunOutcome,
  RunRenderer,
  type RunRendererOptions,
} from "./run-renderer.js";
export { splitMessage } from "./split.js";
export {
  formatDuration,
  formatToolLine,
  formatToolStatus,
  summarizeArgs,
  type ToolLine,
} from "./tool-status.js";
