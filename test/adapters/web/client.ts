/**
 * A web chat client for tests that does what the page does: signs in with a one-time link (the
 * session cookie), takes the page's CSRF token, and sends JSON with both, from the page's origin.
 */
import { expect } from "vitest";

export class WebClient {
  private constructor(
    /** The page's URL (`http://127.0.0.1:1234/` or `…/chat/`). */
    readonly pageUrl: string,
    /** `name=value` of the session cookie. */
    readonly cookie: string,
    readonly csrf: string,
  ) {}

  /** Opens a sign-in link (`…/?token=…`) like a browser: keeps the cookie, then reads the CSRF token. */
  static async open(link: string): Promise<WebClient> {
    const res = await fetch(link, { redirect: "manual" });
    expect(res.status, `the sign-in link ${link} should redirect`).toBe(303);
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^sb_web_\d+=/);
    const url = new URL(link);
    url.search = "";
    url.hash = "";
    const page = url.toString().endsWith("/") ? url.toString() : `${url.toString()}/`;
    const session = await fetch(`${page}api/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    const { csrf } = (await session.json()) as { csrf: string };
    return new WebClient(page, cookie, csrf);
  }

  /** What every request of the page carries. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { cookie: this.cookie, origin: new URL(this.pageUrl).origin, "x-csrf-token": this.csrf, ...extra };
  }

  /** A request relative to the page (`api/conversations`); the raw response. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return fetch(`${this.pageUrl}${path.replace(/^\//, "")}`, {
      method,
      headers: this.headers({
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: "manual",
    });
  }

  /** Uploads a file to a conversation as the page does; the file as the server answered it. */
  async upload(
    conversationId: string,
    name: string,
    bytes: Buffer,
  ): Promise<{ id: string; name: string; size: number; type: string }> {
    const res = await fetch(`${this.pageUrl}api/conversations/${conversationId}/files`, {
      method: "POST",
      headers: this.headers({
        "content-type": "application/octet-stream",
        "x-file-name": encodeURIComponent(name),
      }),
      body: bytes,
    });
    const data = (await res.json()) as { file: { id: string; name: string; size: number; type: string } };
    if (!res.ok) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(data)}`);
    return data.file;
  }

  /** A JSON request; throws with the server's answer on a non-2xx status. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    const data = (await res.json()) as T;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  }
}
