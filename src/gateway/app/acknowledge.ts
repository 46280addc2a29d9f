/**
 * How the gateway tells a user their message arrived, once its delivery is durable and before a
 * worker has picked it up.
 */
import type { ChannelAdapter, InboundMessage } from "../../adapters/types.js";
import type { Logger } from "../log.js";

/**
 * A typing indicator that ends by itself (Telegram, Discord): one the gateway may show without
 * owning the run. An indicator that must be stopped (the web chat's) is left to the run's renderer.
 */
function showsTypingBriefly(adapter: ChannelAdapter): boolean {
  return adapter.capabilities.typingDurationMs > 0 && adapter.stopTyping === undefined;
}

/**
 * Acknowledges a queued message: the channel's `ackReaction` on a mention in a group (resolves once
 * it is added), else, for a direct or mentioned message to an idle thread, the typing action where
 * the platform's indicator ends by itself (not awaited; the run keeps it up). Never rejects: a
 * failed acknowledgement is only logged, since the delivery is settled.
 */
export async function acknowledgeDelivery(
  adapter: ChannelAdapter,
  m: InboundMessage,
  o: { idle: boolean; ackReaction?: string | undefined; log: Logger },
): Promise<void> {
  if (o.ackReaction && m.mentioned && !m.isDirect && m.messageId) {
    await adapter
      .react(m.messageId, o.ackReaction)
      .catch((err: unknown) => o.log.warn({ err }, "could not add the acknowledgement reaction"));
  } else if (o.idle && (m.isDirect || m.mentioned) && showsTypingBriefly(adapter)) {
    void adapter
      .typing(m.threadKey)
      .catch((err: unknown) => o.log.debug({ err }, "could not show the typing indicator"));
  }
}
