/**
 * The Bot API's HTTP answers as grammY should see them, so a failure always says what happened.
 *
 * grammY reads every answer with `res.json()` and, on an error, keeps only the body's
 * `error_code` and `description`. A proxy or a broken server may answer without a `description`
 * (`{"ok":false}`) or with no JSON at all (an HTML 502 page); grammY then reports "undefined" or
 * "network error" and the HTTP status is lost. This fetch wrapper reads the body itself: an error
 * body without a description gets one made of the HTTP status and the body (`HTTP 502 Bad Gateway:
 * <html>…`), and a body that is not a Bot API answer fails with `BotApiHttpError`, which carries the
 * same text. The bot token never appears in these texts.
 */

import { createRequire } from "node:module";
import { SwitchboardError } from "../../agent/errors.js";

/** An answer that is not a Bot API answer (no JSON, or JSON without `ok`). */
export class BotApiHttpError extends SwitchboardError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("telegram.bad_answer", message);
  }
}

/** The parts of a fetch response the wrapper reads (node-fetch 2, which grammY uses on Node). */
interface RawResponse {
  status: number;
  statusText: string;
  text(): Promise<string>;
}
type RawFetch = (url: unknown, init?: unknown) => Promise<RawResponse>;

/** Longest part of a body quoted in an error. */
const BODY_CHARS = 300;

/** grammY's own fetch (node-fetch), resolved from grammY's location so the versions match. */
function grammyFetch(): RawFetch {
  const fromHere = createRequire(import.meta.url);
  const fromGrammy = createRequire(fromHere.resolve("grammy"));
  const mod = fromGrammy("node-fetch") as RawFetch | { default: RawFetch };
  return typeof mod === "function" ? mod : mod.default;
}

/** `text` on one line, at most `BODY_CHARS`, with the token and anything shaped like one removed. */
function quoteBody(text: string, token: string): string {
  let t = text.replace(/\s+/g, " ").trim();
  if (token) t = t.split(token).join("<token>");
  t = t.replace(/\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/g, "<token>");
  if (t === "") return "(empty body)";
  return t.length > BODY_CHARS ? `${t.slice(0, BODY_CHARS - 1)}…` : t;
}

function describe(status: number, statusText: string, body: string, token: string): string {
  return `HTTP ${status}${statusText ? ` ${statusText}` : ""}: ${quoteBody(body, token)}`;
}

/**
 * The Bot API answer in `text` (status `status`), as grammY should read it. Throws
 * `BotApiHttpError` when it is not a Bot API answer.
 */
export function readBotApiAnswer(status: number, statusText: string, text: string, token: string): unknown {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new BotApiHttpError(status, describe(status, statusText, text, token));
  }
  if (typeof data !== "object" || data === null || typeof (data as { ok?: unknown }).ok !== "boolean")
    throw new BotApiHttpError(status, describe(status, statusText, text, token));
  const answer = data as { ok: boolean; error_code?: unknown; description?: unknown };
  if (answer.ok || (typeof answer.description === "string" && answer.description !== "")) return answer;
  return {
    ...answer,
    error_code: typeof answer.error_code === "number" ? answer.error_code : status,
    description: describe(status, statusText, text, token),
  };
}

/** A fetch for grammY's `client.fetch` that makes every failure describe itself (see the header). */
export function describingFetch(token: string, inner: RawFetch = grammyFetch()) {
  return async (url: unknown, init?: unknown) => {
    const res = await inner(url, init);
    const text = await res.text();
    return { json: async () => readBotApiAnswer(res.status, res.statusText, text, token) };
  };
}
