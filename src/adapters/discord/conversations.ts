/**
 * Where a Discord conversation lives and how messages find it.
 *
 * A mention in a text channel gets a thread started on the mentioned message (thread id = message
 * id, so the thread key does not change). Where threads are not allowed (missing permission, a
 * channel type without threads) the conversation is the reply chain instead: the bot replies to the
 * root message in the channel. The choice is made on the first post and remembered in process and,
 * with a `KeyValueStore`, across processes. Replies and reactions in a channel find their
 * conversation by walking `message_reference` links to the root (remembered the same way).
 */

import type { StructuredLogger } from "../../agent/logger.js";
import { DEFAULT_KEY_PREFIX, discordMessageKey, discordThreadKey } from "../../redis-keys.js";
import { BoundedMap } from "../bounded-map.js";
import { isChannelError, type KeyValueStore } from "../types.js";
import type { DiscordApi, RawMessage } from "./api.js";
import { decodeThreadKey, encodeThreadKey } from "./ids.js";

/** Where to post into a conversation. */
export interface Target {
  channel: string;
  /** Reply-chain mode: reply to this message. */
  replyTo?: string;
}

type Mode = "thread" | "chain";

const MEMORY_MS = 14 * 86_400_000;
const MAX_HOPS = 25;

export interface ConversationsOptions {
  api: DiscordApi;
  store?: KeyValueStore;
  prefix?: string;
  log: StructuredLogger;
  /** Thread name when the root message has no usable text. */
  defaultThreadName: string;
}

export class Conversations {
  private readonly modes = new BoundedMap<string, Mode>(50_000);
  private readonly messageKeys = new BoundedMap<string, string>(50_000);
  /** Thread key → id of the message from which on the bot takes part. */
  private readonly joined = new BoundedMap<string, string>(50_000);
  private readonly names = new BoundedMap<string, string>(10_000, 3_600_000);
  private readonly resolving = new Map<string, Promise<Target>>();

  constructor(private readonly o: ConversationsOptions) {}

  private key(threadKey: string, name: string): string {
    return discordThreadKey(this.o.prefix ?? DEFAULT_KEY_PREFIX, threadKey, name);
  }

  private messageKey(channel: string, message: string): string {
    return discordMessageKey(this.o.prefix ?? DEFAULT_KEY_PREFIX, channel, message);
  }

  private async remember(storeKey: string, value: string): Promise<void> {
    try {
      await this.o.store?.set(storeKey, value, MEMORY_MS);
    } catch (err) {
      this.o.log.warn({ err }, "discord: could not write to the shared store");
    }
  }

  private async recall(storeKey: string): Promise<string | undefined> {
    try {
      return await this.o.store?.get(storeKey);
    } catch (err) {
      this.o.log.warn({ err }, "discord: could not read the shared store");
      return undefined;
    }
  }

  /** The conversation is known to be a Discord thread (a message arrived inside it). */
  async markThread(threadKey: string): Promise<void> {
    if (this.modes.get(threadKey) === "thread") return;
    this.modes.set(threadKey, "thread");
    await this.remember(this.key(threadKey, "discord-mode"), "thread");
  }

  /** A name for the thread to start on this conversation's root (the mention's first line). */
  suggestName(threadKey: string, text: string): void {
    const name = threadName(text);
    if (name) this.names.set(threadKey, name);
  }

  /**
   * The bot takes part in this thread from message `since` on: later messages in it are delivered
   * without a mention. Earlier ones stay out even when they are handled late.
   */
  async join(threadKey: string, since: string): Promise<void> {
    const known = this.joined.get(threadKey);
    if (known !== undefined && BigInt(known) <= BigInt(since)) return;
    this.joined.set(threadKey, since);
    await this.remember(this.key(threadKey, "discord-joined"), since);
  }

  /** Whether message `id` in this thread came after the bot joined it. */
  async joinedBefore(threadKey: string, id: string): Promise<boolean> {
    let since = this.joined.get(threadKey);
    if (since === undefined) {
      since = await this.recall(this.key(threadKey, "discord-joined"));
      if (since === undefined || !/^\d+$/.test(since)) return false;
      this.joined.set(threadKey, since);
    }
    return BigInt(since) < BigInt(id);
  }

  /** Record which conversation a channel message belongs to (bot posts in reply-chain mode, replies). */
  async rememberMessage(channel: string, message: string, threadKey: string): Promise<void> {
    this.messageKeys.set(`${channel}:${message}`, threadKey);
    await this.remember(this.messageKey(channel, message), threadKey);
  }

  /**
   * Where to post into `threadKey`. With `create`, the first call for a new conversation starts the
   * thread (or settles on the reply chain where threads are not allowed).
   */
  async target(threadKey: string, create = true): Promise<Target> {
    const k = decodeThreadKey(threadKey);
    if (!k.anchor) return { channel: k.channel };
    const anchor = k.anchor;
    let mode = this.modes.get(threadKey);
    if (!mode) {
      const stored = await this.recall(this.key(threadKey, "discord-mode"));
      if (stored === "thread" || stored === "chain") {
        mode = stored;
        this.modes.set(threadKey, mode);
      }
    }
    if (mode === "thread") return { channel: anchor };
    if (mode === "chain") return { channel: k.channel, replyTo: anchor };
    if (!create) return this.probe(k.channel, anchor);
    let pending = this.resolving.get(threadKey);
    if (!pending) {
      pending = this.settle(threadKey, k.channel, anchor).finally(() => this.resolving.delete(threadKey));
      this.resolving.set(threadKey, pending);
    }
    return pending;
  }

  /** Without creating anything: a thread if the anchor is a channel, else the reply chain. */
  private async probe(channel: string, anchor: string): Promise<Target> {
    try {
      await this.o.api.getChannel(anchor);
      return { channel: anchor };
    } catch (err) {
      if (isChannelError(err, "not_found")) return { channel, replyTo: anchor };
      throw err;
    }
  }

  private async settle(threadKey: string, channel: string, anchor: string): Promise<Target> {
    let name = this.names.get(threadKey);
    if (!name) {
      try {
        name = threadName((await this.o.api.getMessage(channel, anchor)).content);
      } catch (err) {
        // No such message in the channel: the anchor is a thread started without a message.
        if (isChannelError(err, "not_found")) return this.decide(threadKey, "thread", channel, anchor);
        throw err;
      }
    }
    try {
      await this.o.api.startThread(channel, anchor, name || this.o.defaultThreadName);
      return this.decide(threadKey, "thread", channel, anchor);
    } catch (err) {
      if (isChannelError(err, "forbidden", "bad_request")) {
        this.o.log.info({ threadKey, err }, "discord: no thread here; replying in a chain");
        return this.decide(threadKey, "chain", channel, anchor);
      }
      throw err;
    }
  }

  private async decide(threadKey: string, mode: Mode, channel: string, anchor: string): Promise<Target> {
    this.modes.set(threadKey, mode);
    await this.remember(this.key(threadKey, "discord-mode"), mode);
    return mode === "thread" ? { channel: anchor } : { channel, replyTo: anchor };
  }

  /**
   * The conversation a message in a (non-thread) guild channel belongs to: remembered, else the
   * root of its reply chain. `first` is the message itself when the caller already has it.
   */
  async conversationOf(guild: string, channel: string, message: string, first?: RawMessage): Promise<string> {
    const known = await this.knownConversation(channel, message);
    if (known) return known;
    let current = first ?? undefined;
    let id = message;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      if (!current) {
        try {
          current = await this.o.api.getMessage(channel, id);
        } catch (err) {
          this.o.log.debug({ channel, id, err }, "discord: reply chain broken");
          break;
        }
      }
      const parent = current.message_reference?.message_id;
      if (
        !parent ||
        (current.message_reference?.channel_id && current.message_reference.channel_id !== channel)
      )
        break;
      const parentKnown = await this.knownConversation(channel, parent);
      if (parentKnown) return parentKnown;
      id = parent;
      current = undefined;
    }
    return encodeThreadKey(guild, channel, id);
  }

  private async knownConversation(channel: string, message: string): Promise<string | undefined> {
    const mem = this.messageKeys.get(`${channel}:${message}`);
    if (mem) return mem;
    const stored = await this.recall(this.messageKey(channel, message));
    if (stored) this.messageKeys.set(`${channel}:${message}`, stored);
    return stored;
  }
}

/** A thread name from a message: its first line without mentions, at most 80 characters. */
function threadName(text: string): string {
  const line =
    text
      .replace(/<@[!&]?\d+>/g, "")
      .replace(/<#\d+>/g, "")
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
