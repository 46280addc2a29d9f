/**
 * The HTTP access token. When a token is configured (required for any non-loopback bind), every
 * request except public routes must carry it as `Authorization: Bearer <token>` or the `sb_token`
 * cookie. Opening a protected route with `?token=<token>` once in a browser (`/metrics?token=…`)
 * sets the cookie and redirects to the same URL without the token. The web chat does not use this
 * token: it signs people in with one-time links of its own (src/adapters/web/auth.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";

const TOKEN_COOKIE = "sb_token";

/** Constant-time comparison (of digests, so the time does not depend on the length either). */
function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Whether the request carries `token` (header or cookie). Always true when no token is configured. */
export function isAuthorized(c: Context, token: string | undefined): boolean {
  if (!token) return true;
  const header = c.req.header("authorization");
  const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  return sameToken(bearer, token) || sameToken(getCookie(c, TOKEN_COOKIE), token);
}

/**
 * Decides a request to a protected route: `undefined` to go on, or the response to send (a redirect
 * that sets the cookie, or 401).
 */
export function checkToken(c: Context, token: string | undefined): Response | undefined {
  if (isAuthorized(c, token) || !token) return undefined;
  const fromQuery = c.req.query("token");
  if (c.req.method === "GET" && sameToken(fromQuery, token)) {
    const url = new URL(c.req.url);
    url.searchParams.delete("token");
    setCookie(c, TOKEN_COOKIE, token, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure: url.protocol === "https:" || c.req.header("x-forwarded-proto") === "https",
    });
    return c.redirect(`${url.pathname}${url.search}`, 303);
  }
  c.header("WWW-Authenticate", 'Bearer realm="switchboard"');
  return c.json(
    {
      error: "unauthorized",
      hint: "send Authorization: Bearer <token>, or open this page once with ?token=<token> (http.token in the config)",
    },
    401,
  );
}
