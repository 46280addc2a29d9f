/**
 * Discord reactions use Unicode emoji directly; custom emoji are `name:id`. The contract speaks
 * Unicode, with custom emoji as `:name:`.
 */

/** A reaction's emoji as Discord reports it → the contract's form. */
export function emojiFromDiscord(emoji: { id?: string | null; name?: string | null }): string {
  if (emoji.id) return `:${emoji.name ?? emoji.id}:`;
  return emoji.name ?? "";
}

/**
 * The contract's emoji → the path segment of the reactions endpoint, or undefined for `:name:`
 * custom emoji (they need an id this adapter does not know).
 */
export function discordReactionPath(emoji: string): string | undefined {
  const e = emoji.trim();
  if (!e || /^:[\w-]+:$/.test(e)) return undefined;
  const custom = /^<?a?:([\w-]+):(\d+)>?$/.exec(e);
  if (custom) return encodeURIComponent(`${custom[1]}:${custom[2]}`);
  return encodeURIComponent(e);
}
