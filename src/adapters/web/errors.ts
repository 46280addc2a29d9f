/** Errors of the web chat's HTTP side. */
import { SwitchboardError } from "../../agent/errors.js";

/** Refusal of a request from the page: an HTTP status and a message that says what to do. */
export class WebInputError extends SwitchboardError {
  constructor(
    readonly status: 400 | 404 | 413 | 502 | 503,
    message: string,
  ) {
    super("web.request_refused", message);
  }
}
