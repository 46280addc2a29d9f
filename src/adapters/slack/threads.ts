/**
 * Which threads the bot takes part in, so unmentioned replies there are delivered. A thread is
 * joined from a `ts` on (the mention, or the bot's first post): replies older than that stay out
 * even when their events arrive late. Remembered in process and, with a `KeyValueStore`, across
 * processes (the process that posts is often not the one that receives).
 */

import type { StructuredLogger } from "../../agent/logger.js";
import { DEFAULT_KEY_PREFIX, slackBotThreadKey } from "../../redis-keys.js";
import { BoundedMap } from "../bounded-map.js";
import type { KeyValueStore } from "../types.js";
import { compareTs } from "./ids.js";
import type { SlackWeb } from "./web.js";

/** How long the shared store remembers that the bot is in a thread. */
const THREAD_MEMORY_MS = 14 * 86_400_000;

export interface ThreadMembershipOptions {
  web: SlackWeb;
  log: StructuredLogger;
  store?: KeyValueStore;
  prefix?: string;
  isBotThread?: (threadKey: string) => boolean | Promise<boolean>;
}

export class ThreadMembership {
  /** Thread key → ts from which on the bot takes part. */
  private readonly known = new BoundedMap<string, string>(50_000);
  private readonly notBot = new BoundedMap<string, true>(10_000, 30_000);

  constructor(private readonly o: ThreadMembershipOptions) {}

  private storeKey(threadKey: string): string {
    return slackBotThreadKey(this.o.prefix ?? DEFAULT_KEY_PREFIX, threadKey);
  }

  /** Remember that the bot takes part in a thread from `since` on, here and in the shared store. */
  async join(threadKey: string, since: string): Promise<void> {
    const known = this.known.get(threadKey);
    if (known !== undefined && compareTs(known, since) <= 0) return;
    this.known.set(threadKey, since);
    try {
      await this.o.store?.set(this.storeKey(threadKey), since, THREAD_MEMORY_MS);
    } catch (err) {
      this.o.log.warn({ threadKey, err }, "slack: could not record the thread in the store");
    }
  }

  /**
   * Whether message `ts` in the thread came after the bot joined it: remembered here, else in the
   * store, else the `isBotThread` hook, else one `conversations.replies` look-up (cached).
   */
  async includes(key: string, channel: string, threadTs: string, ts: string): Promise<boolean> {
    const known = this.known.get(key);
    if (known !== undefined) return compareTs(known, ts) < 0;
    try {
      const stored = await this.o.store?.get(this.storeKey(key));
      if (stored !== undefined && /^\d+\.\d+$/.test(stored)) {
        this.known.set(key, stored);
        return compareTs(stored, ts) < 0;
      }
      if (this.o.isBotThread) return await this.o.isBotThread(key);
      if (this.notBot.has(key)) return false;
      const yes = await this.o.web.botInThread(channel, threadTs);
      if (yes) this.known.set(key, threadTs);
      else this.notBot.set(key, true);
      return yes;
    } catch (err) {
      this.o.log.warn({ key, err }, "slack: could not tell whether the bot is in a thread");
      return false;
    }
  }
}
