/**
 * Reactions on Telegram. Bots may only use Telegram's standard reaction emoji, which lack the
 * approval marks, so the seam's marks travel as stand-ins: ✅ ↔ 👍, ❌ ↔ 👎, ♾️ ↔ 💯. Inbound stand-ins
 * are reported as the marks; other emoji pass through unchanged.
 */

const OUT: Record<string, string> = { "✅": "👍", "✔️": "👍", "❌": "👎", "♾️": "💯", "♾": "💯" };
const IN: Record<string, string> = { "👍": "✅", "👎": "❌", "💯": "♾️" };

/** The emoji Telegram will accept for a seam emoji. */
export function toTelegramReaction(emoji: string): string {
  return OUT[emoji] ?? emoji;
}

/** The seam emoji for a Telegram reaction. */
export function fromTelegramReaction(emoji: string): string {
  return IN[emoji] ?? emoji;
}
