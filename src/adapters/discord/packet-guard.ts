/**
 * discord.js applies each gateway dispatch in `WebSocketManager.handlePacket`, called from the
 * @discordjs/ws message handler (an async function): a dispatch whose structure discord.js does not
 * expect (e.g. `mentions` not an array) throws there and surfaces as an unhandled rejection, which
 * ends a Node process. This guard wraps that one method per client so such a dispatch is logged
 * with its type and dropped, and the connection carries on with the next one.
 */
import type { Client } from "discord.js";
import type { StructuredLogger } from "../../agent/logger.js";

type HandlePacket = (packet?: unknown, shard?: unknown) => boolean;

/**
 * Wrap `client.ws.handlePacket` (discord.js private API, present in v14) so an exception thrown
 * while applying one dispatch is logged and that dispatch ignored. Throws a programmer error when
 * discord.js no longer has the method, so an upgrade that moves it is noticed at start-up.
 */
export function guardPacketHandling(client: Client, shardId: number, log: StructuredLogger): void {
  // SDK edge: handlePacket is private in discord.js's typings.
  const ws = client.ws as unknown as { handlePacket?: HandlePacket };
  const original = ws.handlePacket;
  if (typeof original !== "function")
    throw new Error(
      "discord.js: WebSocketManager.handlePacket not found; the malformed-dispatch guard needs updating for this discord.js version",
    );
  ws.handlePacket = function guardedHandlePacket(packet?: unknown, shard?: unknown): boolean {
    try {
      return original.call(this, packet, shard);
    } catch (err) {
      const t = (packet as { t?: unknown } | undefined)?.t;
      log.warn(
        { shard: shardId, dispatch: typeof t === "string" ? t : "unknown", err },
        "discord: malformed gateway dispatch ignored",
      );
      return true;
    }
  };
}
