/**
 * Who may use the web chat. Every request needs a session that only a browser holding a sign-in
 * link can start, on loopback too, because anything else running on the machine (a tool process, a
 * background job) can reach loopback ports and read the gateway's environment:
 *
 * 1. `switchboard start` prints a sign-in link with a one-time token (`…/?token=…`), made in memory
 *    and never written to the environment, a file or the log. Opening it (or pasting it into the
 *    sign-in form) starts a session: a random secret in an `HttpOnly`, `SameSite=Strict` cookie.
 *    The token then no longer works. A signed-in page can make further one-time links.
 * 2. Every request carries the session cookie; the store keeps only its SHA-256 digest.
 * 3. Requests that change anything (`POST`) must also carry the page's CSRF token
 *    (`X-CSRF-Token`, an HMAC of a per-page nonce under the session secret), come from the page's
 *    own origin and send JSON (a file upload: `application/octet-stream`).
 * 4. Without an HTTP access token the server is bound to loopback, and requests must name a
 *    loopback host (`127.0.0.1`, `localhost`, `[::1]`) or the configured public URL's host, so a
 *    DNS-rebinding page is refused as well.
 *
 * The HTTP access token (`http.token`) plays no part here: it sits in the gateway's environment, so
 * it cannot prove that a request comes from a person.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context, Env, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { WebAuthStore } from "./auth-store.js";
import { SIGN_IN_CSP, signInPage } from "./sign-in-page.js";

/** How long a session lasts after its last use. */
const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** How long a link made by a signed-in page works (once). */
export const PAGE_LINK_TTL_MS = 15 * 60 * 1000;
/** How long the link printed at start works (once). */
export const START_LINK_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** The header that carries the CSRF token. */
const CSRF_HEADER = "x-csrf-token";

export interface WebAccessOptions {
  store: WebAuthStore;
  /**
   * Which `Host` headers to answer. Default: loopback names only (`isLoopbackHostHeader`); the
   * gateway passes its server's rule (any name when it requires its access token).
   */
  isAllowedHost?: (host: string | undefined) => boolean;
  sessionTtlMs?: number;
}

const digest = (secret: string) => createHash("sha256").update(secret).digest("hex");
const randomToken = () => randomBytes(32).toString("base64url");

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The host name of a `Host` header, lower case, without port (IPv6 keeps its brackets). */
function hostName(host: string | undefined): string {
  const h = (host ?? "").trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1 || undefined);
  return h.replace(/:\d*$/, "");
}

/** Whether a `Host` header names this machine: `127.0.0.1`, `localhost` or `[::1]`, with any port. */
function isLoopbackHostHeader(host: string | undefined): boolean {
  const h = (host ?? "").trim().toLowerCase();
  return /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/.test(h);
}

const wantsHtml = (c: Context) => (c.req.header("accept") ?? "").includes("text/html");

function refuse(c: Context, status: 401 | 403 | 415, message: string): Response {
  if (c.req.method === "GET" && wantsHtml(c)) {
    const safe = message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return c.html(
      `<!doctype html><meta charset="utf-8"><title>Switchboard</title><p style="font:16px system-ui;margin:3em">${safe}</p>`,
      status,
    );
  }
  return c.json({ error: status === 401 ? "unauthorized" : "forbidden", message }, status);
}

/** The sign-in state of the web chat's requests. */
export class WebAccess {
  private readonly store: WebAuthStore;
  private readonly isAllowedHost: (host: string | undefined) => boolean;
  private readonly ttlMs: number;
  private readonly sessions = new WeakMap<Request, string>();

  constructor(o: WebAccessOptions) {
    this.store = o.store;
    this.isAllowedHost = o.isAllowedHost ?? isLoopbackHostHeader;
    this.ttlMs = o.sessionTtlMs ?? SESSION_TTL_MS;
  }

  /** A new one-time sign-in token (for `…/?token=<it>`), working for `ttlMs`. */
  async newSignInToken(ttlMs = PAGE_LINK_TTL_MS): Promise<string> {
    const token = randomToken();
    await this.store.addSignIn(digest(token), ttlMs);
    return token;
  }

  /** The CSRF token for a page served to a signed-in request (a fresh nonce each call). */
  csrfToken(c: Context): string {
    const secret = this.sessions.get(c.req.raw);
    if (!secret) throw new Error("web chat: csrfToken() needs a signed-in request");
    const nonce = randomBytes(12).toString("base64url");
    return `${nonce}.${mac(secret, nonce)}`;
  }

  /** Ends the request's session and clears its cookie. */
  async signOut(c: Context, base: string): Promise<void> {
    const secret = this.sessions.get(c.req.raw);
    if (secret) await this.store.endSession(digest(secret));
    deleteCookie(c, cookieName(c), { path: cookiePath(base) });
  }

  /**
   * The middleware in front of every web chat route. `baseOf` gives the path the chat is mounted at
   * (ends with `/`).
   */
  middleware<E extends Env>(baseOf: (c: Context<E>) => string): MiddlewareHandler<E> {
    return async (c, next) => {
      if (!this.isAllowedHost(c.req.header("host")))
        return refuse(
          c,
          403,
          `The web chat answers only on this machine (127.0.0.1, localhost or [::1]); this request was for "${hostName(c.req.header("host")).slice(0, 100)}". Set http.publicUrl (behind a tunnel or proxy), or http.token and http.host, to reach it under another name.`,
        );
      const base = baseOf(c);
      const method = c.req.method;
      const token = c.req.query("token");
      if (method === "GET" && token !== undefined) return this.signInByLink(c, base, token);
      if (method === "POST" && c.req.path === `${base}signin`) return this.signInByForm(c, base);

      const secret = getCookie(c, cookieName(c));
      if (!secret || !(await this.store.touchSession(digest(secret), this.ttlMs))) {
        if (method === "GET" && wantsHtml(c)) return this.signInResponse(c, base, nextOf(c), 401);
        return refuse(
          c,
          401,
          "Sign in to the web chat first: open the sign-in link that `switchboard start` printed (docs/web-chat.md).",
        );
      }
      this.sessions.set(c.req.raw, secret);
      if (method !== "GET" && method !== "HEAD") {
        const problem = this.writeProblem(c, secret);
        if (problem) return refuse(c, problem.status, problem.message);
      }
      await next();
      return undefined;
    };
  }

  private async signInByLink(c: Context, base: string, token: string): Promise<Response> {
    const url = new URL(c.req.url);
    url.searchParams.delete("token");
    const next = `${url.pathname}${url.search}`;
    if (!(await this.store.redeemSignIn(digest(token))))
      return this.signInResponse(c, base, next, 401, "This sign-in link was used already or has expired.");
    await this.startSession(c, base);
    return c.redirect(next, 303);
  }

  private async signInByForm(c: Context, base: string): Promise<Response> {
    if (originProblem(c)) return refuse(c, 403, "Requests from other web sites are not accepted.");
    let form: Record<string, string | File | (string | File)[]>;
    try {
      form = await c.req.parseBody();
    } catch {
      return this.signInResponse(c, base, base, 400, "The sign-in form could not be read; try again.");
    }
    const given = typeof form.token === "string" ? form.token.trim() : "";
    const rawNext = typeof form.next === "string" ? form.next : base;
    const next = safeNext(rawNext, base);
    const token = tokenIn(given);
    if (!token || !(await this.store.redeemSignIn(digest(token))))
      return this.signInResponse(
        c,
        base,
        next,
        401,
        "That sign-in link or token was used already, has expired or is wrong.",
      );
    await this.startSession(c, base);
    return c.redirect(next, 303);
  }

  private async startSession(c: Context, base: string): Promise<void> {
    const secret = randomToken();
    await this.store.addSession(digest(secret), this.ttlMs);
    const url = new URL(c.req.url);
    setCookie(c, cookieName(c), secret, {
      httpOnly: true,
      sameSite: "Strict",
      path: cookiePath(base),
      maxAge: Math.floor(this.ttlMs / 1000),
      secure: url.protocol === "https:" || c.req.header("x-forwarded-proto") === "https",
    });
  }

  private signInResponse(
    c: Context,
    base: string,
    next: string,
    status: 400 | 401,
    problem?: string,
  ): Response {
    if (!(c.req.method === "GET" && wantsHtml(c)) && c.req.method !== "POST")
      return c.json({ error: "unauthorized", message: problem ?? "Sign in first." }, status);
    c.header("Content-Security-Policy", SIGN_IN_CSP);
    c.header("Cache-Control", "no-store");
    // Not no-referrer: with it a browser sends `Origin: null` with the form, which reads as another site.
    c.header("Referrer-Policy", "same-origin");
    return c.html(
      signInPage({ action: `${base}signin`, next: safeNext(next, base), ...(problem ? { problem } : {}) }),
      status,
    );
  }

  /** Why a write must be refused (origin, body type, CSRF token), or undefined. */
  private writeProblem(c: Context, secret: string): { status: 403 | 415; message: string } | undefined {
    if (originProblem(c)) return { status: 403, message: "Requests from other web sites are not accepted." };
    const type = (c.req.header("content-type") ?? "").toLowerCase();
    // File uploads send the bytes as they are; still never a type a plain HTML form can send.
    const upload = c.req.path.endsWith("/files") && type.startsWith("application/octet-stream");
    if (!upload && !type.startsWith("application/json"))
      return { status: 415, message: "Send the request body as application/json." };
    const given = c.req.header(CSRF_HEADER) ?? "";
    const [nonce, tag] = given.split(".");
    if (!nonce || !tag || !equal(tag, mac(secret, nonce)))
      return {
        status: 403,
        message: `Send the page's CSRF token in the ${CSRF_HEADER} header (GET api/session gives one).`,
      };
    return undefined;
  }
}

function mac(secret: string, nonce: string): string {
  return createHmac("sha256", secret).update(`csrf:${nonce}`).digest("base64url");
}

/** A cookie per port, so two Switchboards on one host (cookies ignore ports) keep their sessions apart. */
function cookieName(c: Context): string {
  const url = new URL(c.req.url);
  return `sb_web_${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

function cookiePath(base: string): string {
  return base === "/" ? "/" : base.replace(/\/+$/, "");
}

/**
 * True when the request comes from another site. Browsers say where a request comes from in
 * `Sec-Fetch-Site` (only `same-origin` passes); older ones only in `Origin` (it must name this host;
 * `null`, an opaque origin, does not). Scripts without either are not browsers, so CSRF does not
 * apply to them; they still need the session cookie and the CSRF token.
 */
function originProblem(c: Context): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined) return site !== "same-origin";
  const origin = c.req.header("origin");
  if (origin === undefined) return false;
  if (origin === "null") return true;
  try {
    return new URL(origin).host.toLowerCase() !== (c.req.header("host") ?? "").toLowerCase();
  } catch {
    return true;
  }
}

function nextOf(c: Context): string {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

/** `next` when it is a path inside the chat, else the chat's root (no open redirects). */
function safeNext(next: string, base: string): string {
  const inside = next === base.replace(/\/+$/, "") || next.startsWith(base);
  return inside && !next.startsWith("//") && !next.includes("\\") ? next : base;
}

/** The token in what a person pasted: a whole sign-in link, or the token alone. */
function tokenIn(given: string): string | undefined {
  if (!given) return undefined;
  if (/^https?:\/\//i.test(given)) {
    try {
      return new URL(given).searchParams.get("token") ?? undefined;
    } catch {
      return undefined;
    }
  }
  return /^[A-Za-z0-9_-]{16,200}$/.test(given) ? given : undefined;
}
