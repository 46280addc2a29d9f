/**
 * Who may use the web chat's HTTP side. With an access token: a request carries it as
 * `Authorization: Bearer <token>` or as the `sb_token` cookie, which opening the page once with
 * `?token=<token>` sets (then redirects to the address without it). Without a token the chat is for
 * this machine only: requests must name a loopback host (`localhost`, `127.0.0.1`, `[::1]`), which
 * also stops DNS-rebinding pages from reaching it. Writes must be JSON from the page's own origin, so
 * another site open in the same browser cannot post into the chat.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, Env, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";

/** The cookie the gateway's HTTP server uses too, so one visit with `?token=` serves both. */
export const TOKEN_COOKIE = "sb_token";

export interface WebAuthOptions {
  token?: string | undefined;
  isAuthorized?: ((request: Request) => boolean) | undefined;
  allowAnyHost?: boolean | undefined;
}

function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The host name of a `Host` header, lower case, without port or IPv6 brackets. */
export function hostName(host: string | undefined): string {
  const h = (host ?? "").trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined);
  return h.replace(/:\d+$/, "");
}

export function isLoopbackName(name: string): boolean {
  return (
    name === "localhost" ||
    name.endsWith(".localhost") ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) ||
    name === "::1" ||
    name === "0:0:0:0:0:0:0:1"
  );
}

const wantsHtml = (c: Context) => (c.req.header("accept") ?? "").includes("text/html");

function refuse(c: Context, status: 401 | 403 | 415, message: string): Response {
  if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="switchboard"');
  if (c.req.method === "GET" && wantsHtml(c)) {
    const safe = message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return c.html(
      `<!doctype html><meta charset="utf-8"><title>Switchboard</title><p style="font:16px system-ui;margin:3em">${safe}</p>`,
      status,
    );
  }
  return c.json({ error: status === 401 ? "unauthorized" : "forbidden", message }, status);
}

/** The middleware that guards every web chat route. */
export function webAuth<E extends Env>(o: WebAuthOptions): MiddlewareHandler<E> {
  const token = o.token || undefined;
  return async (c, next) => {
    const host = c.req.header("host");
    if (o.isAuthorized) {
      if (!o.isAuthorized(c.req.raw))
        return refuse(c, 401, "Open the web chat with the link that carries the access token (?token=…).");
    } else if (token) {
      const bearer = c.req
        .header("authorization")
        ?.match(/^Bearer\s+(.+)$/i)?.[1]
        ?.trim();
      if (!sameToken(bearer, token) && !sameToken(getCookie(c, TOKEN_COOKIE), token)) {
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
        return refuse(
          c,
          401,
          "This web chat needs the access token: open it once as …/?token=<http.token>, or send Authorization: Bearer <token>.",
        );
      }
    } else if (!o.allowAnyHost && !isLoopbackName(hostName(host))) {
      return refuse(
        c,
        403,
        `The web chat has no access token, so it answers only on localhost (this request was for "${hostName(host).slice(0, 100)}"). Set http.token to reach it from elsewhere.`,
      );
    }
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      const origin = c.req.header("origin");
      if (origin !== undefined && origin !== "null") {
        let originHost = "";
        try {
          originHost = new URL(origin).host.toLowerCase();
        } catch {
          originHost = "";
        }
        if (originHost !== (host ?? "").toLowerCase())
          return refuse(c, 403, "Requests from other web sites are not accepted.");
      } else if (origin === "null") {
        return refuse(c, 403, "Requests from other web sites are not accepted.");
      }
      if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("application/json"))
        return refuse(c, 415, "Send the request body as application/json.");
    }
    await next();
    return undefined;
  };
}
