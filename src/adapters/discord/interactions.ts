/**
 * Answers to application commands. Discord requires an acknowledgement within 3 s, so the adapter
 * defers every command as soon as it arrives ("… is thinking"), before the command handler runs.
 * `respond` then fills in the deferred reply and sends further text as follow-ups, which the
 * interaction token allows for 15 minutes; after that (or when the token is refused) the text is
 * posted as an ordinary channel message. Text over 2,000 characters is split.
 */
import { type ChatInputCommandInteraction, MessageFlags } from "discord.js";
import type { Clock } from "../../agent/clock.js";
import type { StructuredLogger } from "../../agent/logger.js";
import { toDiscordMarkdown } from "../render/markdown.js";
import { splitMessage } from "../render/split.js";
import { isChannelError } from "../types.js";
import { toChannelError } from "./errors.js";

/** Interaction tokens live 15 minutes; stop using them a minute early. */
const INTERACTION_TOKEN_MS = 15 * 60_000;
const TOKEN_MARGIN_MS = 60_000;
export const DISCORD_CONTENT_LIMIT = 2000;

const NO_PINGS = { parse: [], repliedUser: false } as const;

export interface CommandReplyOptions {
  clock: Clock;
  log: StructuredLogger;
  /** Defer ephemerally (only the invoking user sees the answer). */
  ephemeral: boolean;
  /** Post into the command's conversation as a plain channel message. */
  postToChannel: (text: string) => Promise<void>;
}

/**
 * Acknowledge the interaction now (`deferReply`). Resolves false when Discord refused it (too late,
 * already acknowledged); `respond` then posts channel messages.
 */
export async function deferCommand(i: ChatInputCommandInteraction, o: CommandReplyOptions): Promise<boolean> {
  try {
    await i.deferReply(o.ephemeral ? { flags: MessageFlags.Ephemeral } : {});
    return true;
  } catch (err) {
    o.log.warn({ err: toChannelError(err, "defer reply") }, "discord: could not acknowledge a command");
    return false;
  }
}

/** The `respond` function of an `InboundCommand` for a deferred interaction. */
export function commandResponder(
  i: ChatInputCommandInteraction,
  deferred: boolean,
  o: CommandReplyOptions,
): (text: string, opts?: { ephemeral?: boolean }) => Promise<void> {
  let original = deferred ? "pending" : "none";
  let tokenUsable = deferred;
  const tokenValid = () =>
    tokenUsable && o.clock.now() - i.createdTimestamp < INTERACTION_TOKEN_MS - TOKEN_MARGIN_MS;

  const sendOne = async (content: string, ephemeral: boolean): Promise<void> => {
    if (!tokenValid()) {
      await o.postToChannel(content);
      return;
    }
    try {
      if (original === "pending") {
        if (ephemeral && !o.ephemeral) {
          // The deferral was public; an ephemeral answer replaces it with a private follow-up.
          await i.deleteReply();
          await i.followUp({ content, flags: MessageFlags.Ephemeral, allowedMentions: NO_PINGS });
        } else {
          await i.editReply({ content, allowedMentions: NO_PINGS });
        }
        original = "sent";
        return;
      }
      await i.followUp({
        content,
        allowedMentions: NO_PINGS,
        ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
      });
    } catch (err) {
      const e = toChannelError(err, "command reply");
      if (!isChannelError(e, "unauthorized", "not_found")) throw e;
      o.log.info({ err: e }, "discord: interaction token no longer usable; posting in the channel");
      tokenUsable = false;
      await o.postToChannel(content);
    }
  };

  return async (text, opts) => {
    const parts = splitMessage(toDiscordMarkdown(text), DISCORD_CONTENT_LIMIT).filter((p) => p.trim() !== "");
    for (const part of parts) await sendOne(part, opts?.ephemeral ?? false);
  };
}
