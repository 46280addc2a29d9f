/** Errors of the web chat's HTTP side. */

/** Refusal of a request from the page: an HTTP status and a message that says what to do. */
export class WebInputError extends Error {
  override readonly name = "WebInputError";
  constructor(
    readonly status: 400 | 404 | 413 | 502 | 503,
    message: string,
  ) {
    super(message);
  }
}
