/**
 * PUBLISH that keeps one publisher's order on a Redis Cluster too. A cluster client sends a command
 * without keys to any node, and messages published at two nodes reach a subscriber over two
 * cluster-bus links, so they can arrive in another order than they were sent (the web chat's feed
 * showed an edit before the message's creation). Here every message of a channel leaves from the
 * primary serving the hash slot of the channel's name, over that node's one connection, so they
 * arrive in the order they were published while the cluster's layout holds.
 */
import { isCluster, type RedisClient } from "./client.js";

/** Hash slot by channel name (the slot of a name never changes; channels are few). */
const slots = new Map<string, number>();

/** Publishes `message` on `channel`; on a cluster, always through the same primary for `channel`. */
export async function publishInOrder(client: RedisClient, channel: string, message: string): Promise<void> {
  if (!isCluster(client)) {
    await client.publish(channel, message);
    return;
  }
  let slot = slots.get(channel);
  if (slot === undefined) {
    slot = Number(await client.cluster("KEYSLOT", channel));
    slots.set(channel, slot);
  }
  const owner = client.slots[slot]?.[0];
  const node = owner
    ? client.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === owner)
    : undefined;
  await (node ?? client).publish(channel, message);
}
