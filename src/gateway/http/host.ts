/**
 * The `Host` rule of a server without an access token: it is bound to loopback, and it answers only
 * requests that name loopback, so a web page on another site that points its own host name at
 * 127.0.0.1 (DNS rebinding) cannot read or drive it through the operator's browser.
 */

/** Whether a `Host` header is `127.0.0.1`, `localhost` or `[::1]`, with or without a port. */
function isLoopbackHostHeader(host: string | undefined): boolean {
  return /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/.test((host ?? "").trim().toLowerCase());
}

/**
 * The `Host` rule of a server: with an access token any name (the token guards it); without one,
 * loopback names and the host of `publicUrl` (the name the operator says people and platforms use,
 * e.g. a tunnel's), with any port for loopback.
 */
export function hostRule(o: {
  token?: string | undefined;
  publicUrl?: string | undefined;
}): (host: string | undefined) => boolean {
  if (o.token) return () => true;
  let publicHost: string | undefined;
  try {
    publicHost = o.publicUrl ? new URL(o.publicUrl).host.toLowerCase() : undefined;
  } catch {
    publicHost = undefined;
  }
  return (host) =>
    isLoopbackHostHeader(host) ||
    (publicHost !== undefined && (host ?? "").trim().toLowerCase() === publicHost);
}
