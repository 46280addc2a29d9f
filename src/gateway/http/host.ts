/**
 * The `Host` rule of a server without an access token: it is bound to loopback, and it answers only
 * requests that name loopback, so a web page on another site that points its own host name at
 * 127.0.0.1 (DNS rebinding) cannot read or drive it through the operator's browser.
 */

/** Whether a `Host` header is `127.0.0.1`, `localhost` or `[::1]`, with or without a port. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  return /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/.test((host ?? "").trim().toLowerCase());
}
