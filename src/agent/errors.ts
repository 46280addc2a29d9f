/**
 * The text of anything thrown, for the places that show an error as text (chat notices, command
 * output, reports). Logs take the error object itself under `err` (pino's serializer keeps the
 * message, stack and code); these helpers are for where one line of text is the right form.
 */

/**
 * The message of anything thrown: an `Error`'s `message`; for anything else its `message` field
 * when it has one, else its JSON (never "[object Object]"), else its text.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error !== "object" || error === null) return String(error);
  const message = (error as { message?: unknown }).message;
  if (typeof message === "string") return message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** The first line of an error's message, at most 300 characters ("unknown error" when empty). */
export function errorText(error: unknown): string {
  const first = errorMessage(error).split("\n", 1)[0] ?? "";
  return first.length > 300 ? `${first.slice(0, 297)}...` : first || "unknown error";
}

/** A namespaced error code: `area.what`, e.g. `queue.replica_wait`, `config.invalid`. */
export type ErrorCode = `${string}.${string}`;

/**
 * The one base of the project's errors. `code` is stable and namespaced by the area that throws
 * (docs/errors.md lists them), so callers and logs branch on it rather than on the class or the
 * message; the message says what failed and how to fix it, and never holds a credential. `name` is
 * the subclass's name.
 */
export class SwitchboardError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
