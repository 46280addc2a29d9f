/** The Telegram channel adapter. Import grammY only inside this folder. */
export {
  TelegramAdapter,
  type TelegramAdapterConfig,
} from "./adapter.js";
