/**
 * The fallback launch probe: a process that loads the Telegram adapter and starts polling the Bot
 * API at `SB_TG_API_ROOT` with `TELEGRAM_BOT_TOKEN`, as the gateway would, without the rest of the
 * wiring. Used by the launch figure when `switchboard start` cannot run here.
 */
import { TelegramAdapter } from "../../src/adapters/telegram/adapter.js";

const token = process.env.TELEGRAM_BOT_TOKEN;
const apiRoot = process.env.SB_TG_API_ROOT;
if (!token || !apiRoot) throw new Error("launch-probe: set TELEGRAM_BOT_TOKEN and SB_TG_API_ROOT.");
const adapter = new TelegramAdapter({ token, apiRoot });
await adapter.start({ onMessage() {}, onReaction() {}, onCommand() {} });
process.once("SIGTERM", () => {
  void adapter.stop().finally(() => process.exit(0));
});
