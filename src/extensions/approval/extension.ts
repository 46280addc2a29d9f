/**
 * Approval by reaction, as an extension. Worker side: a `tool_call` gate that, for calls whose
 * rule asks for it, posts a request into the thread, adds ✅ ❌ ♾️, waits for a decision (or the
 * timeout) through the `ApprovalStore`, edits the request to show the outcome, writes an audit
 * entry, and lets the call run or blocks it with a reason for the model. Gateway side: `reaction`
 * handling, `/approve <id>` and `/deny <id>`, `/approval <id>` (an admin reads the whole call when
 * the request shows only its head and tail), and cancelling on `/stop`.
 *
 * Who decides: only an admin of the request's platform, and only for that request: a reaction on
 * the request message itself, or `/approve <id>` typed in the request's thread. Nothing else
 * (other people's reactions, the bot's own, a command from another thread) settles anything.
 *
 * Fail closed: any failure while asking (the store or the chat is down) blocks the call; the gate
 * never throws, so it is never disabled by a passing outage. A call that must ask where the
 * platform has no admin is blocked at once, saying so.
 */

import { errorText } from "../../agent/errors.js";
import { type Clock, systemClock } from "../clock.js";
import type {
  ApprovalRule,
  ExtensionAPI,
  ExtensionContext,
  ExtensionFactory,
  ThreadView,
  ToolCallEvent,
  ToolCallResult,
} from "../types.js";
import { auditData, decidedText, denialReason, requestText, stoppedText, wholeCallText } from "./messages.js";
import { callFingerprint, needsApproval } from "./rules.js";
import {
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalStore,
  isApproval,
  isApprovalId,
} from "./types.js";

/** The `customType` of audit entries. */
export const APPROVAL_ENTRY_TYPE = "approval";

/** Reactions the bot adds to a request, in order. */
export const APPROVAL_REACTIONS = ["✅", "❌", "♾️"] as const;

const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** Render-journal ids of approval requests: `approval:<id>`. */
const JOURNAL_PREFIX = "approval:";

/** Emoji (normalised by adapters, plus common names and the bare ♾) → decision. */
const EMOJI_OUTCOMES: Record<string, ApprovalOutcome> = {
  "✅": "approved",
  ":white_check_mark:": "approved",
  "❌": "denied",
  ":x:": "denied",
  "♾️": "approved_always",
  "♾": "approved_always",
  ":infinity:": "approved_always",
};

export interface ApprovalExtensionOptions {
  store: ApprovalStore;
  /** Whether `userId` is a configured admin of `platform`; only admins decide. */
  isAdmin(platform: string, userId: string): boolean;
  /** How long a request waits for a decision. Default 10 minutes. */
  timeoutMs?: number;
  /** Default: the system clock. Tests drive the timeout with a manual clock. */
  clock?: Clock;
  /** Rules by tool name; they override the `approval` the tools declare (e.g. bash patterns from config). */
  rules?: Record<string, ApprovalRule>;
  /**
   * The policy above the rules: true when a call must ask whatever its rule says (bash without a
   * sandbox, a channel whose policy is "always ask"). A policy that throws counts as "ask".
   */
  mustAsk?(toolName: string, thread: ThreadView): boolean;
  /** Whether `platform` has any admin (a request nobody can decide is refused at once). Default: yes. */
  hasAdmins?(platform: string): boolean;
}

/** The approval extension; register it under the name `approval`. */
export function createApprovalExtension(options: ApprovalExtensionOptions): ExtensionFactory {
  const { store } = options;
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  /** Ids of the requests a run of this process waits on (the others of a thread have no waiter here). */
  const waiting = new Set<string>();
  /** Per thread, the closing of requests a stopped worker left, while it is under way (never rejects). */
  const closing = new Map<string, Promise<void>>();

  return (api: ExtensionAPI) => {
    // Not awaited by the session start (a round trip off every tenure's first model call): a
    // request this thread's run creates waits for it first, so a fresh request is never read as
    // one a stopped worker left.
    api.on("session_start", (_event, ctx) => {
      const threadKey = ctx.thread.threadKey;
      const startedAt = clock.now();
      // After an earlier start's closing of the same thread, so no request is settled twice.
      const before = closing.get(threadKey) ?? Promise.resolve();
      const done = before
        .then(() => closeLeftRequests(ctx, startedAt))
        .finally(() => {
          if (closing.get(threadKey) === done) closing.delete(threadKey);
        });
      closing.set(threadKey, done);
      return undefined;
    });

    api.on("tool_call", async (event, ctx) => {
      const rule = options.rules?.[event.toolName] ?? event.tool.approval;
      if (!policyAsks(event.toolName, ctx.thread) && !needsApproval(rule, event.input)) return undefined;
      if (options.hasAdmins && !options.hasAdmins(ctx.thread.platform)) {
        return {
          block: true,
          reason:
            `This ${event.toolName} call needs an admin's approval, but ${ctx.thread.platform} has no admin configured ` +
            `(channels.${ctx.thread.platform}.admins), so it was not run. Tell the user an admin must be configured.`,
        };
      }
      try {
        return await gate(event, ctx);
      } catch (e) {
        ctx.logger.warn({ err: e, tool: event.toolName }, "approval request failed; call blocked");
        return {
          block: true,
          reason: `This ${event.toolName} call needs an admin's approval, but the request failed (${errorText(e)}); it was not run.`,
        };
      }
    });

    api.on("reaction", async (event, ctx) => {
      const outcome = EMOJI_OUTCOMES[event.emoji];
      if (!outcome || !event.added) return undefined;
      try {
        // The request is found by its own message, so the reaction is on that thread's request.
        const record = await findRequest(event.messageRef, ctx.thread.threadKey);
        if (!record) return undefined;
        // The bot's own ✅ ❌ ♾️ and anyone who is not an admin of this platform decide nothing.
        if (event.user.isBot || !isAdminOf(record, ctx, event.user.id)) return { handled: true };
        const by = event.user.name ? { id: event.user.id, name: event.user.name } : { id: event.user.id };
        await store.decide(record.id, { outcome, by, at: clock.now() });
        return { handled: true };
      } catch (e) {
        // The reaction is lost, not the request: it still times out as denied, and /approve works.
        ctx.logger.warn({ err: e, messageRef: event.messageRef }, "could not apply an approval reaction");
        return undefined;
      }
    });

    api.on("thread_stop", async (_event, ctx) => {
      try {
        const pending = await store.pendingIn(ctx.thread.threadKey);
        const cancelled: string[] = [];
        for (const record of pending) {
          const decision = ctx.thread.user
            ? { outcome: "cancelled" as const, by: ctx.thread.user, at: clock.now() }
            : { outcome: "cancelled" as const, at: clock.now() };
          const out = await store.decide(record.id, decision);
          if (out.applied) cancelled.push(`${record.id} (${record.toolName})`);
        }
        return cancelled.length > 0
          ? { note: `Cancelled pending approval ${cancelled.join(", ")}.` }
          : undefined;
      } catch (e) {
        // The stopped run's own abort still cancels its wait; this only loses the note.
        ctx.logger.warn({ err: e }, "could not cancel pending approvals");
        return {
          note: `Could not cancel pending approvals here (${errorText(e)}); the stopped run cancels its own.`,
        };
      }
    });

    for (const [name, outcome] of [
      ["approve", "approved"],
      ["deny", "denied"],
    ] as const) {
      api.registerCommand(name, {
        description:
          name === "approve"
            ? "Approve a pending tool call (add `always` to remember it for the thread)"
            : "Deny a pending tool call",
        usage: name === "approve" ? "<id> [always]" : "<id>",
        async handler(args, ctx) {
          const [id = "", extra = ""] = args.trim().toLowerCase().split(/\s+/);
          if (!isApprovalId(id)) {
            await ctx.reply(
              `Usage: /${name} <id>, with the id from the approval request (6 letters and digits).`,
            );
            return;
          }
          const chosen: ApprovalOutcome =
            outcome === "approved" && extra === "always" ? "approved_always" : outcome;
          try {
            const record = await store.get(id);
            if (!record) {
              await ctx.reply(`There is no approval request ${id}.`);
              return;
            }
            if (!isAdminOf(record, ctx, ctx.user.id)) {
              await ctx.reply(`Only admins of ${record.platform} can decide approval requests.`);
              return;
            }
            if (record.threadKey !== ctx.thread.threadKey) {
              await ctx.reply(
                `Approval request ${id} was asked in another thread; nothing changed. Type /${name} ${id} in that thread (reply to the request).`,
              );
              return;
            }
            const out = await store.decide(id, { outcome: chosen, by: ctx.user, at: clock.now() });
            const status = out.record?.status ?? "expired";
            if (out.applied) {
              const verb =
                status === "approved_always"
                  ? "Approved (for the rest of the thread)"
                  : isApproval(status)
                    ? "Approved"
                    : "Denied";
              await ctx.reply(`${verb} ${id} (${record.toolName}).`);
            } else {
              await ctx.reply(`Approval request ${id} was already settled: ${status}.`);
            }
          } catch (e) {
            ctx.logger.warn({ err: e, id }, `/${name} failed`);
            await ctx.reply(`Could not ${name} ${id}: ${errorText(e)}`);
          }
        },
      });
    }

    api.registerCommand("approval", {
      description: "Show an approval request's whole tool call (admins)",
      usage: "<id>",
      async handler(args, ctx) {
        const id = args.trim().toLowerCase();
        if (!isApprovalId(id)) {
          await ctx.reply(
            "Usage: /approval <id>, with the id from the approval request (6 letters and digits).",
          );
          return;
        }
        try {
          const record = await store.get(id);
          if (!record || record.threadKey !== ctx.thread.threadKey) {
            await ctx.reply(`There is no approval request ${id} in this thread.`);
            return;
          }
          if (!isAdminOf(record, ctx, ctx.user.id)) {
            await ctx.reply(`Only admins of ${record.platform} can read approval requests whole.`);
            return;
          }
          await ctx.reply(wholeCallText(record));
        } catch (e) {
          ctx.logger.warn({ err: e, id }, "/approval failed");
          await ctx.reply(`Could not show ${id}: ${errorText(e)}`);
        }
      },
    });
  };

  /**
   * A thread's agent is built by the worker that just took the thread: a request of the thread
   * that no run of this process waits on was asked by a worker that died (its tool call is closed
   * as interrupted). It is settled as cancelled, so no later reaction or /approve acts on it. Its
   * message is the render journal's to finish (the holder's recovery edits it to the text recorded
   * for a stopped worker, finding it by its key when its id was never recorded); a host without a
   * journal edits it here when its id is known.
   */
  async function closeLeftRequests(ctx: ExtensionContext, startedAt: number): Promise<void> {
    try {
      const journaled = ctx.host.durableMessage?.(`${JOURNAL_PREFIX}probe`) !== undefined;
      for (const record of await store.pendingIn(ctx.thread.threadKey)) {
        // A request made after this agent was built is this tenure's own (a budget request does
        // not wait for this closing as a tool call's does), not one a dead worker left.
        if (waiting.has(record.id) || record.createdAt > startedAt) continue;
        const settled = await settleAs(record, "cancelled");
        if (settled.messageRef && !journaled)
          await ctx.host.edit(settled.messageRef, decidedText(settled), { format: "markdown" });
      }
    } catch (e) {
      ctx.logger.warn({ err: e }, "could not close approval requests a stopped worker left");
    }
  }

  function policyAsks(toolName: string, thread: ThreadView): boolean {
    if (!options.mustAsk) return false;
    try {
      return options.mustAsk(toolName, thread);
    } catch {
      return true;
    }
  }

  function isAdminOf(record: ApprovalRecord, ctx: ExtensionContext, userId: string): boolean {
    return ctx.thread.platform === record.platform && options.isAdmin(record.platform, userId);
  }

  async function gate(event: ToolCallEvent, ctx: ExtensionContext): Promise<ToolCallResult | undefined> {
    const { thread } = ctx;
    await closing.get(thread.threadKey);
    const fingerprint = callFingerprint(event.toolName, event.input);
    if (await store.isRemembered(thread.threadKey, fingerprint)) {
      await audit(ctx, {
        id: "remembered",
        toolName: event.toolName,
        args: event.input,
        outcome: "approved_always",
        ...(thread.user ? { requestedBy: thread.user } : {}),
        remembered: true,
      });
      return undefined;
    }
    const now = clock.now();
    const record = await store.create({
      threadKey: thread.threadKey,
      platform: thread.platform,
      toolName: event.toolName,
      args: event.input,
      fingerprint,
      ...(thread.user ? { requestedBy: thread.user } : {}),
      createdAt: now,
      expiresAt: now + timeoutMs,
    });
    // Under the render journal when the host has one: the post's key and the text the request must
    // end with if this worker dies are recorded before the post, its id as the platform answers.
    const durable = ctx.host.durableMessage?.(`${JOURNAL_PREFIX}${record.id}`);
    let ref: string;
    try {
      ref = durable
        ? await durable.post(requestText(record), stoppedText(record))
        : await ctx.host.post(requestText(record), { format: "markdown" });
      await store.attachMessage(record.id, ref);
    } catch (e) {
      await store.decide(record.id, { outcome: "cancelled", at: clock.now() }).catch(() => {});
      throw e;
    }
    for (const emoji of APPROVAL_REACTIONS) {
      // Without the bot's reactions people can still react themselves or use /approve.
      await ctx.host
        .react(ref, emoji)
        .catch((e: unknown) => ctx.logger.warn({ err: e }, "could not add reaction"));
    }
    waiting.add(record.id);
    let settled: ApprovalRecord;
    try {
      settled = await awaitDecision(record, ctx.signal);
    } finally {
      waiting.delete(record.id);
    }
    await (durable
      ? durable.finish(decidedText(settled))
      : ctx.host.edit(ref, decidedText(settled), { format: "markdown" })
    ).catch((e: unknown) =>
      ctx.logger.warn({ err: e, id: record.id }, "could not edit the approval request"),
    );
    await audit(ctx, auditData(settled));
    return isApproval(settled.status) ? undefined : { block: true, reason: denialReason(settled) };
  }

  /**
   * The request whose message is `messageRef`. A request is posted before its message id is
   * stored, so a quick reaction can arrive first: while the thread has a request without a message,
   * look again every 100 ms for up to 5 s instead of dropping the decision (a second was too short
   * on a loaded machine: an admin's ✅ was lost in a full test run).
   */
  async function findRequest(messageRef: string, threadKey: string): Promise<ApprovalRecord | undefined> {
    for (let attempt = 0; ; attempt++) {
      const record = await store.findByMessage(messageRef);
      if (record || attempt >= 50) return record;
      const pending = await store.pendingIn(threadKey);
      if (!pending.some((r) => r.messageRef === undefined)) return undefined;
      await clock.sleep(100);
    }
  }

  /** Waits for a decision, the timeout (→ expired) or the run's abort (→ cancelled); resolves with the settled record. */
  async function awaitDecision(
    record: ApprovalRecord,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalRecord> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const decided = store
      .waitForDecision(record.id, stop.signal)
      .then((r) => ({ kind: "decided" as const, record: r }));
    const timedOut = clock
      .sleep(Math.max(0, record.expiresAt - clock.now()), stop.signal)
      .then(() => ({ kind: "timeout" as const }));
    decided.catch(() => {});
    timedOut.catch(() => {});
    try {
      const first = await Promise.race([decided, timedOut]);
      if (first.kind === "decided") return first.record;
      return await settleAs(record, "expired");
    } catch (e) {
      if (signal?.aborted) return await settleAs(record, "cancelled");
      throw e;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      stop.abort();
    }
  }

  /** Settles as `outcome` unless a decision got there first; either way returns the settled record. */
  async function settleAs(record: ApprovalRecord, outcome: "expired" | "cancelled"): Promise<ApprovalRecord> {
    const out = await store.decide(record.id, { outcome, at: clock.now() });
    return out.record ?? { ...record, status: outcome, decidedAt: clock.now() };
  }

  async function audit(ctx: ExtensionContext, data: ReturnType<typeof auditData>): Promise<void> {
    await ctx.appendEntry(APPROVAL_ENTRY_TYPE, data).catch((e: unknown) =>
      // A run stopped by a shutdown or a /stop may have handed its thread over already: the entry
      // has nowhere to go, and nothing is wrong (the next holder closes the request).
      ctx.signal?.aborted
        ? ctx.logger.info(
            { id: data.id, outcome: data.outcome, reason: errorText(e) },
            "the run stopped before the approval audit entry was written",
          )
        : ctx.logger.error({ err: e, id: data.id }, "could not write the approval audit entry"),
    );
  }
}
