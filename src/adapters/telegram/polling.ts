/**
 * Long polling of `getUpdates`, owned by at most one gateway process when a `ConnectionLease` is
 * given. Updates are handed over in order; the offset advances past each handled update, and on a
 * graceful stop a last zero-timeout `getUpdates` confirms what was handled so the next holder does
 * not receive it again. An update whose handling failed or is still busy elsewhere (the handler
 * answers false: Redis unreachable, another attempt's live claim) is never confirmed: the loop
 * waits and asks for it again, and the updates after it wait too, so order is kept. After
 * `MAX_UPDATE_ATTEMPTS` failed attempts in a row it is logged as an error and passed over, so one
 * update that can never be handled does not stop the bot for good. Failures never end the loop: network errors and 409 conflicts back off and
 * retry; only an invalid token (401) stops it, reported as the `failed` state.
 *
 * The connection counts as `connected` once a poll is running against a Bot API that answered (the
 * adapter's `getMe`/`deleteWebhook`, or an earlier poll), not only when the first long poll comes
 * back: on a quiet bot that takes the whole poll timeout. A Bot API that answers `getUpdates` at
 * once and empty (a proxy or test server ignoring `timeout`, or `timeoutSeconds: 0`) would be polled
 * as fast as it answers; after a few such answers in a row the loop waits between polls, doubling up
 * to `MAX_EMPTY_WAIT_MS`, until an update arrives.
 */
import type { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Clock } from "../../agent/clock.js";
import type { StructuredLogger } from "../../agent/logger.js";
import type { ConnectionLease, ConnectionStatus } from "../types.js";
import { isPollingConflict, toChannelError } from "./errors.js";

export interface PollingOptions {
  api: Api;
  allowedUpdates: string[];
  /** Long-poll timeout in seconds (default 25). */
  timeoutSeconds?: number;
  lease?: ConnectionLease;
  clock: Clock;
  log: StructuredLogger;
  /** The Bot API answered just before polling starts (it counts as connected from the first poll on). */
  reachable?: boolean;
  /**
   * Handles one update; must not throw (the adapter catches handler errors). Resolves false when it
   * was not handled (it failed, or another attempt still holds it): it is asked for again.
   */
  onUpdate(update: Update): Promise<boolean>;
  onState(state: ConnectionStatus["state"], detail?: string): void;
}

/** An empty `getUpdates` answer faster than this counts as immediate. */
const IMMEDIATE_MS = 1000;
/** Immediate empty answers in a row that are polled again at once. */
const FREE_EMPTY_POLLS = 3;
const FIRST_EMPTY_WAIT_MS = 100;
export const MAX_EMPTY_WAIT_MS = 2000;
/** Attempts at one update before it is passed over (about ten minutes of backoff). */
const MAX_UPDATE_ATTEMPTS = 30;
/** Wait before asking again for an update that was not handled: doubles from this, up to 30 s. */
const RETRY_UPDATE_MS = 500;

/** Run until `signal` aborts. Resolves after the last request ended. */
export async function runPolling(o: PollingOptions, signal: AbortSignal): Promise<void> {
  if (!o.lease) {
    await pollWhile(o, signal);
    return;
  }
  o.onState("connecting");
  await o.lease.hold((lost) => pollWhile(o, lost, lost, signal), {
    signal,
    onState: (s) =>
      o.onState(
        s === "held" ? "connecting" : "standby",
        s === "standby" ? "another process polls" : undefined,
      ),
  });
}

/**
 * Poll until `signal` aborts. With a lease, `signal` is the lease's `lost` signal (which also aborts on
 * stop); `stop` tells the two apart: after a real loss the last confirmation is skipped.
 */
async function pollWhile(
  o: PollingOptions,
  signal: AbortSignal,
  lost?: AbortSignal,
  stop?: AbortSignal,
): Promise<void> {
  let offset: number | undefined;
  let failures = 0;
  let connected = false;
  let reachable = o.reachable === true;
  let empties = 0;
  /** The update that was not handled, and how often in a row. */
  let retrying: { id: number; attempts: number } | undefined;
  const timeout = o.timeoutSeconds ?? 25;
  while (!signal.aborted) {
    if (reachable && !connected) {
      o.onState("connected");
      connected = true;
    }
    let updates: Update[];
    const started = o.clock.now();
    try {
      updates = await o.api.getUpdates(
        {
          ...(offset !== undefined ? { offset } : {}),
          timeout,
          // biome-ignore lint/suspicious/noExplicitAny: grammY types allowed_updates as a literal union.
          allowed_updates: o.allowedUpdates as any,
        },
        // grammY declares its own AbortSignal type (abort-controller); Node's is compatible at runtime.
        signal as Parameters<Api["getUpdates"]>[1],
      );
      if (!connected) o.onState("connected");
      connected = true;
      reachable = true;
      failures = 0;
    } catch (err) {
      if (signal.aborted) break;
      failures++;
      const e = toChannelError(err, "getUpdates");
      if (e.kind === "unauthorized") {
        o.onState("failed", e.message);
        o.log.error({ err: e }, "Telegram polling stopped: the bot token was rejected");
        return;
      }
      connected = false;
      reachable = false;
      empties = 0;
      const conflict = isPollingConflict(err);
      o.onState(
        "connecting",
        conflict ? "409 conflict: another getUpdates or a webhook is active" : e.message,
      );
      o.log.warn({ err: e, attempt: failures }, "Telegram getUpdates failed; retrying");
      const wait = e.retryAfterMs ?? Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
      try {
        await o.clock.sleep(wait, signal);
      } catch {
        break;
      }
      continue;
    }
    let failed: Update | undefined;
    for (const u of updates) {
      // Once the lease is lost, another process owns these updates.
      if (lost?.aborted && !stop?.aborted) return;
      if (!(await o.onUpdate(u))) {
        failed = u;
        break;
      }
      retrying = undefined;
      offset = u.update_id + 1;
    }
    if (failed) {
      // Not confirmed: the next getUpdates (from this offset) returns it again, after a wait.
      const attempts = retrying?.id === failed.update_id ? retrying.attempts + 1 : 1;
      retrying = { id: failed.update_id, attempts };
      if (attempts >= MAX_UPDATE_ATTEMPTS) {
        o.log.error(
          { updateId: failed.update_id, attempts },
          "a Telegram update failed every attempt; passing over it",
        );
        offset = failed.update_id + 1;
        retrying = undefined;
        continue;
      }
      o.log.warn(
        { updateId: failed.update_id, attempt: attempts },
        "Telegram update not handled; asking again",
      );
      try {
        await o.clock.sleep(Math.min(30_000, RETRY_UPDATE_MS * 2 ** Math.min(attempts - 1, 6)), signal);
      } catch {
        break;
      }
      // Asked again from the failed update on (every update before it is confirmed).
      offset = failed.update_id;
      continue;
    }
    if (updates.length > 0 || o.clock.now() - started >= IMMEDIATE_MS) {
      empties = 0;
      continue;
    }
    empties++;
    if (empties <= FREE_EMPTY_POLLS) continue;
    const wait = Math.min(MAX_EMPTY_WAIT_MS, FIRST_EMPTY_WAIT_MS * 2 ** (empties - FREE_EMPTY_POLLS - 1));
    if (empties === FREE_EMPTY_POLLS + 1)
      o.log.warn(
        { timeoutSeconds: timeout },
        "Telegram answers getUpdates at once with nothing (a proxy ignoring the timeout?); polling less often until updates arrive",
      );
    try {
      await o.clock.sleep(wait, signal);
    } catch {
      break;
    }
  }
  // Confirm handled updates, unless another process already polls (that would end its poll with 409).
  if (offset !== undefined && (!lost?.aborted || stop?.aborted)) {
    try {
      await o.api.getUpdates({ offset, limit: 1, timeout: 0 });
    } catch (err) {
      o.log.debug({ err: toChannelError(err, "getUpdates") }, "could not confirm the last updates");
    }
  }
}
