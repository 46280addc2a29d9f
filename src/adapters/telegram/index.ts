/** The Telegram channel adapter. Import grammY only inside this folder. */
export {
  createTelegramAdapter,
  TELEGRAM_ALLOWED_UPDATES,
  TelegramAdapter,
  type TelegramAdapterConfig,
} from "./adapter.js";
export { fromTelegramReaction, toTelegramReaction } from "./emoji.js";
export type { NodeRequestHandler } from "./webhook.js";
