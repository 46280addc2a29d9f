/**
 * The web chat's HTTP side, as a Hono app the gateway mounts under `channels.web.path`:
 *
 * | route | what |
 * |---|---|
 * | `GET /`, `GET /c/:id` | the page (with a conversation open) |
 * | `POST /signin` | the sign-in form (`token`, `next`) |
 * | `GET /api/session` | `{ csrf, me }`: a CSRF token for scripts, and who the user is |
 * | `POST /api/sign-in-links` | → 201 `{ url }`: a one-time link to sign in another browser (15 min) |
 * | `POST /api/sign-out` | ends the session |
 * | `GET /api/conversations` | `{ conversations }`, newest first |
 * | `POST /api/conversations` | `{ title?, kind?: "direct" \| "group", text?, clientId? }` → 201 `{ conversation, message? }`: with `text`, its first message (a refused one makes no conversation) |
 * | `GET /api/conversations/:id/messages` | `{ conversation, messages }`, oldest first |
 * | `POST /api/conversations/:id/files` | the file's bytes (`application/octet-stream`, name in `X-File-Name`) → 201 `{ file }` |
 * | `GET /api/conversations/:id/files/:fid` | a file of a message (pictures inline, anything else as a download) |
 * | `POST /api/conversations/:id/messages` | `{ text, clientId?, files? }` → 201 `{ message }` once delivered |
 * | `POST /api/conversations/:id/messages/:mid/reactions` | `{ emoji, added?: boolean }` → `{ message }` |
 * | `GET /api/events[?conversation=id]` | Server-Sent Events: `snapshot`, then every change |
 *
 * Every route is behind `WebAccess` (sign-in session, loopback host, same-origin JSON writes with
 * the page's CSRF token).
 */
import { type Context, type Env, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { baseRoutePath } from "hono/route";
import type { BlankEnv } from "hono/types";
import { PAGE_LINK_TTL_MS } from "./auth.js";
import { WebInputError } from "./errors.js";
import { serveEventStream } from "./event-stream.js";
import { INLINE_TYPES } from "./files.js";
import { isConversationId, isMessageId } from "./ids.js";
import type { ConversationKind, WebFile } from "./model.js";
import { webPage } from "./page.js";
import type { WebChatService } from "./service.js";

const MAX_BODY_BYTES = 512 * 1024;

type Json = Record<string, unknown>;

async function jsonBody<E extends Env>(c: Context<E>): Promise<Json> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new WebInputError(400, "The request body is not valid JSON.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new WebInputError(400, "The request body must be a JSON object.");
  return body as Json;
}

function optionalString(body: Json, key: string, max: number): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || v.length > max)
    throw new WebInputError(400, `"${key}" must be a string of at most ${max} characters.`);
  return v;
}

/** The files a message send names (`[{ id, name }]`, as the upload answered them). */
function filesOf(body: Json): WebFile[] {
  const v = body.files;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > 20)
    throw new WebInputError(400, '"files" must be a list of at most 20 uploaded files.');
  return v.map((f) => {
    const o = (f ?? {}) as Json;
    if (typeof o.id !== "string" || !/^u[A-Za-z0-9_-]{1,40}$/.test(o.id) || typeof o.name !== "string")
      throw new WebInputError(400, 'Each of "files" must be { id, name } as the upload answered it.');
    return { id: o.id, name: o.name, size: 0, type: "" };
  });
}

function conversationParam<E extends Env>(c: Context<E>): string {
  const id = c.req.param("id") ?? "";
  if (!isConversationId(id)) throw new WebInputError(404, `There is no conversation ${id.slice(0, 40)}.`);
  return id;
}

/**
 * The routes of one web chat adapter. `E` is the Hono environment of the app it is mounted in (the
 * routes use no bindings, so any environment fits).
 */
export function createWebChatApp<E extends Env = BlankEnv>(adapter: WebChatService): Hono<E> {
  const app = new Hono<E>();
  const { config, access } = adapter;

  /** Where the gateway mounted the chat (`/`, `/chat/`); the page's API calls go below it. */
  const baseOf = (c: Context<E>) => {
    const mount = baseRoutePath(c) || "/";
    return mount.endsWith("/") ? mount : `${mount}/`;
  };
  app.use("*", access.middleware<E>(baseOf));
  const jsonLimit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ error: "too_large", message: "The request body is too large." }, 413),
  });
  // File uploads stream into the upload store, which holds them to the file limit itself.
  app.use("/api/*", (c, next) =>
    c.req.method === "POST" && c.req.path.endsWith("/files") ? next() : jsonLimit(c, next),
  );
  app.onError((err, c) => {
    if (err instanceof WebInputError) return c.json({ error: "refused", message: err.message }, err.status);
    config.logger?.error({ err, path: c.req.path }, "web chat request failed");
    return c.json({ error: "internal", message: "Something went wrong in the web chat; see the log." }, 500);
  });

  const page = (c: Context<E>) => {
    const { html, csp } = webPage();
    c.header("Content-Security-Policy", csp);
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "same-origin");
    c.header("X-Content-Type-Options", "nosniff");
    return c.html(html(baseOf(c), access.csrfToken(c)));
  };
  app.get("/", page);
  app.get("/c/:id", page);
  // Mounted at `/chat`, the page is `/chat`; `/chat/` must find it too.
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" && c.req.path !== "/" && c.req.path === baseOf(c)) return page(c);
    await next();
    return undefined;
  });

  app.get("/api/session", (c) => c.json({ csrf: access.csrfToken(c), me: adapter.identity }));

  app.post("/api/sign-in-links", async (c) => {
    const url = new URL(c.req.url);
    const link = await adapter.signInLink(`${url.origin}${baseOf(c)}`, PAGE_LINK_TTL_MS);
    return c.json({ url: link, expiresInMs: PAGE_LINK_TTL_MS }, 201);
  });

  app.post("/api/sign-out", async (c) => {
    await access.signOut(c, baseOf(c));
    return c.json({ ok: true });
  });

  app.get("/api/conversations", async (c) => c.json({ conversations: await adapter.store.list() }));

  app.post("/api/conversations", async (c) => {
    const body = await jsonBody(c);
    const title = optionalString(body, "title", 200);
    const kind = body.kind ?? "direct";
    if (kind !== "direct" && kind !== "group")
      throw new WebInputError(400, '"kind" must be "direct" or "group".');
    const opts = { kind: kind as ConversationKind, ...(title !== undefined ? { title } : {}) };
    if (body.text === undefined) return c.json({ conversation: await adapter.createConversation(opts) }, 201);
    if (typeof body.text !== "string") throw new WebInputError(400, '"text" must be a string.');
    const clientId = optionalString(body, "clientId", 100);
    return c.json(await adapter.startConversation(opts, body.text, clientId), 201);
  });

  app.get("/api/conversations/:id/messages", async (c) => {
    const id = conversationParam(c);
    const [conversation, messages] = await Promise.all([adapter.store.get(id), adapter.store.messages(id)]);
    if (!conversation || !messages) throw new WebInputError(404, `There is no conversation ${id}.`);
    return c.json({ conversation, messages });
  });

  app.post("/api/conversations/:id/messages", async (c) => {
    const id = conversationParam(c);
    const body = await jsonBody(c);
    const text = body.text;
    if (typeof text !== "string") throw new WebInputError(400, '"text" must be a string.');
    const clientId = optionalString(body, "clientId", 100);
    const message = await adapter.receiveText(id, text, clientId, filesOf(body));
    return c.json({ message }, 201);
  });

  app.post("/api/conversations/:id/files", async (c) => {
    const id = conversationParam(c);
    const raw = c.req.header("x-file-name") ?? "";
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      throw new WebInputError(400, "X-File-Name must be the file's name, URI-encoded.");
    }
    const body = c.req.raw.body;
    if (!body) throw new WebInputError(400, "The request has no file.");
    const file = await adapter.files.receive(id, name, body as unknown as AsyncIterable<Uint8Array>);
    return c.json({ file }, 201);
  });

  app.get("/api/conversations/:id/files/:fid", async (c) => {
    const id = conversationParam(c);
    const fid = c.req.param("fid") ?? "";
    const messages = (await adapter.store.messages(id)) ?? [];
    const file = messages.flatMap((m) => m.files ?? []).find((f) => f.id === fid);
    const found = file
      ? await adapter.files.download({ id: `${id}/${fid}`, kind: "file" }).catch(() => undefined)
      : undefined;
    if (!file || !found) throw new WebInputError(404, "There is no such file (any more).");
    const inline = INLINE_TYPES.has(file.type);
    const encoded = encodeURIComponent(file.name);
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        try {
          for await (const chunk of found.body) controller.enqueue(chunk);
          controller.close();
        } catch (e) {
          controller.error(e);
        }
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": inline ? file.type : "application/octet-stream",
        "content-length": String(file.size),
        "content-disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encoded}`,
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, max-age=3600",
      },
    });
  });

  app.post("/api/conversations/:id/messages/:mid/reactions", async (c) => {
    const id = conversationParam(c);
    const mid = c.req.param("mid") ?? "";
    if (!isMessageId(mid)) throw new WebInputError(404, `There is no message ${mid.slice(0, 40)}.`);
    const body = await jsonBody(c);
    const emoji = body.emoji;
    if (typeof emoji !== "string") throw new WebInputError(400, '"emoji" must be a string.');
    if (body.added !== undefined && typeof body.added !== "boolean")
      throw new WebInputError(400, '"added" must be true or false.');
    const message = await adapter.receiveReaction(id, mid, emoji, body.added !== false);
    return c.json({ message });
  });

  app.get("/api/events", (c) => serveEventStream(c, adapter));

  return app;
}
