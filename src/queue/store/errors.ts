/**
 * Errors of the session stores. Each has a stable `code` for callers that branch on it.
 */

export type StoreErrorCode =
  | "LEASE_LOST"
  | "SESSION_NOT_FOUND"
  | "ENTRY_NOT_FOUND"
  | "INVALID_ENTRY"
  | "INVALID_IMPORT";

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
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
      "LEASE_LOST",
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
      "SESSION_NOT_FOUND",
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
      "ENTRY_NOT_FOUND",
      `Entry ${entryId} does not exist in session ${sessionId} of thread ${threadKey}; parent and leaf ids must name stored entries.`,
    );
  }
}

export class InvalidEntryError extends StoreError {
  constructor(message: string) {
    super("INVALID_ENTRY", message);
  }
}

export class InvalidImportError extends StoreError {
  constructor(message: string) {
    super("INVALID_IMPORT", message);
  }
}
