/**
 * The access gate the gateway calls for every inbound message and command before anything else
 * runs: the policy's decision plus, for denials that deserve one, a short notice at most once per
 * thread within the notice TTL.
 */

import type { StructuredLogger } from "../../agent/logger.js";
import type { NoticeMemory } from "./notices.js";
import {
  ACCESS_NOTICES,
  type AccessConfig,
  type AccessDenial,
  type AccessSubject,
  checkAccess,
  isAdmin,
  mayChangeSettings,
} from "./policy.js";

export interface AccessGateOptions {
  config: AccessConfig;
  notices: NoticeMemory;
  /** How long one thread stays "told". Default 24 hours. */
  noticeTtlMs?: number;
  /** The bot's own user id per platform, when the adapter knows it. */
  botUserIds?: Readonly<Record<string, string | undefined>>;
  logger?: StructuredLogger;
}

/** `run`: start a run. Otherwise `notice`, when set, is the text to post into the thread. */
export type AccessVerdict = { run: true } | { run: false; reason: AccessDenial; notice?: string };

export class AccessGate {
  private readonly ttl: number;

  constructor(private readonly options: AccessGateOptions) {
    this.ttl = options.noticeTtlMs ?? 24 * 60 * 60 * 1000;
  }

  /** Checks one inbound message or command of `threadKey`. Never rejects: a notice-memory failure only skips the notice. */
  async check(subject: AccessSubject & { threadKey: string }): Promise<AccessVerdict> {
    const decision = checkAccess(this.options.config, subject, this.options.botUserIds?.[subject.platform]);
    if (decision.allow) return { run: true };
    const verdict: AccessVerdict = { run: false, reason: decision.reason };
    if (!decision.notify) return verdict;
    try {
      if (await this.options.notices.claim(subject.threadKey, this.ttl)) {
        const notice = ACCESS_NOTICES[decision.reason];
        if (notice) verdict.notice = notice;
      }
    } catch (e) {
      this.options.logger?.warn({ err: e, threadKey: subject.threadKey }, "access notice memory failed");
    }
    return verdict;
  }

  /** Whether `userId` is an admin of `platform` (for the approval extension's `isAdmin`). */
  isAdmin(platform: string, userId: string): boolean {
    return isAdmin(this.options.config, platform, userId);
  }

  /** Whether `platform` has at least one admin (someone who can approve a tool call). */
  hasAdmins(platform: string): boolean {
    return (this.options.config[platform]?.admins?.length ?? 0) > 0;
  }

  /** Whether `userId` may change a thread's model and thinking level (the channel's `settings` policy). */
  mayChangeSettings(platform: string, userId: string, isDirect: boolean): boolean {
    return mayChangeSettings(this.options.config, platform, userId, isDirect);
  }
}
