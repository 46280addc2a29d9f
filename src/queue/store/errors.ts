/**
 * Errors of the session stores. Each has a stable namespaced `code` for callers that branch on it.
 */
import { SwitchboardError } from "../../agent/errors.js";

export type StoreErrorCode =
  | "thread.lease_lost"
  | "session.not_found"
  | "session.entry_not_found"
  | "session.invalid_entry"
  | "session.invalid_import";

class StoreError extends SwitchboardError {
  declare readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string) {
    super(code, message);
  }
}

/**
 * The fence did not match: another worker holds the thread's lease (or it expired), so this
 * worker must stop working on the thread. Nothing was written.
 */
export class LeaseLostError extends StoreError {
  constructor(
    readonly threadKey: string,
    readonly fenceKey: string,
  ) {
    super(
      "thread.lease_lost",
      `Lost the lease on thread ${threadKey} (${fenceKey} no longer holds this worker's token); nothing was written. Stop working on this thread; its new holder continues.`,
    );
  }
}

export class SessionNotFoundError extends StoreError {
  constructor(
    readonly threadKey: string,
    readonly sessionId?: string,
  ) {
    super(
      "session.not_found",
      sessionId === undefined
        ? `Thread ${threadKey} has no session; create one with createSession() first.`
        : `Session ${sessionId} does not exist in thread ${threadKey}; list them with listSessions().`,
    );
  }
}

export class EntryNotFoundError extends StoreError {
  constructor(
    readonly threadKey: string,
    readonly sessionId: string,
    readonly entryId: string,
  ) {
    super(
      "session.entry_not_found",
      `Entry ${entryId} does not exist in session ${sessionId} of thread ${threadKey}; parent and leaf ids must name stored entries.`,
    );
  }
}

export class InvalidEntryError extends StoreError {
  constructor(message: string) {
    super("session.invalid_entry", message);
  }
}

export class InvalidImportError extends StoreError {
  constructor(message: string) {
    super("session.invalid_import", message);
  }
}
