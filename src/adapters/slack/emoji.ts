/**
 * Slack names reactions (`white_check_mark`); the contract speaks Unicode (`✅`). This table covers
 * the emoji Switchboard itself uses plus common ones; anything else travels as `:name:`.
 */

const NAME_TO_EMOJI: Record<string, string> = {
  white_check_mark: "✅",
  heavy_check_mark: "✔️",
  x: "❌",
  infinity: "♾️",
  eyes: "👀",
  "+1": "👍",
  thumbsup: "👍",
  "-1": "👎",
  thumbsdown: "👎",
  heart: "❤️",
  fire: "🔥",
  tada: "🎉",
  thinking_face: "🤔",
  warning: "⚠️",
  no_entry: "⛔",
  stop_sign: "🛑",
  hourglass_flowing_sand: "⏳",
  rocket: "🚀",
  pray: "🙏",
  ok_hand: "👌",
  wave: "👋",
  raised_hands: "🙌",
  star: "⭐",
  bulb: "💡",
  memo: "📝",
  repeat: "🔁",
  arrows_counterclockwise: "🔄",
  question: "❓",
  exclamation: "❗",
  wastebasket: "🗑️",
};

/** Emoji → Slack name; variation selectors are ignored so `♾` and `♾️` both map. */
const EMOJI_TO_NAME = new Map<string, string>();
for (const [name, emoji] of Object.entries(NAME_TO_EMOJI)) {
  const bare = stripVariation(emoji);
  if (!EMOJI_TO_NAME.has(bare)) EMOJI_TO_NAME.set(bare, name);
}

function stripVariation(s: string): string {
  return s.replace(/\uFE0F/g, "");
}

/** A Slack reaction name (possibly with `::skin-tone-N`) → Unicode emoji, or `:name:` if unknown. */
export function emojiFromSlackName(name: string): string {
  const base = name.replace(/::skin-tone-\d$/, "");
  return NAME_TO_EMOJI[base] ?? `:${base}:`;
}

/**
 * A contract emoji (Unicode or `:name:`) → the `name` Slack's reactions API wants (no colons), or
 * undefined when the emoji has no known Slack name.
 */
export function slackNameFromEmoji(emoji: string): string | undefined {
  const custom = /^:([a-z0-9_+'-]+):$/i.exec(emoji.trim());
  if (custom?.[1]) return custom[1].toLowerCase();
  return EMOJI_TO_NAME.get(stripVariation(emoji.trim()));
}
