/**
 * What a run owes the chat, as the render journal records it (docs/runtime.md, "The render
 * journal"), and finishing it on a later worker. A snapshot lists the run's chat messages in the
 * order they are (to be) posted: the platform ids of each one's parts and the text it must end
 * with. Finishing edits each sent part to its final text (an edit to the text it already shows
 * changes nothing, so finishing twice shows it once), posts the parts never sent, records each new
 * id before going on, and deletes parts the final text no longer needs.
 */

import { lstat, realpath } from "node:fs/promises";
import type { Clock } from "../../agent/clock.js";
import { redactSecrets } from "../../agent/llm/redact.js";
import type { StructuredLogger } from "../../agent/logger.js";
import type { ChannelAdapter, MessageRef, RateLimiter, RenderLog } from "../types.js";
import { isChannelError } from "../types.js";
import { newPostKey } from "./live-message.js";
import { splitMessage } from "./split.js";

/** One chat message of a run: its parts' platform ids (none yet: never sent) and its final text. */
export interface OwedMessage {
  refs: MessageRef[];
  /** The text it must end with; empty: it must not stay (its parts are deleted). */
  text: string;
  /** The user message its first part replies to. */
  replyTo?: MessageRef;
  /**
   * The text it must end with instead when the session lacks the assistant message of time stamp
   * `timestamp` (its worker died between recording it and saving it: it is answered again).
   */
  ifUnsaved?: { timestamp: number; text: string };
  /**
   * A post recorded as about to go out (or sent without an answer): the part it makes and its
   * idempotency key. Its id, if the platform answered, is in the journal's posted ids, or the
   * platform finds it by the key (`findPosted`, or Discord's nonce on a repeated post).
   */
  posting?: { part: number; key: string; staged?: string };
  /**
   * The message is a file (`send_file`): its text is the caption, and finishing uploads the file
   * (`finishUpload`) instead of posting text. `staged`, in `posting`, is the platform's token for
   * an upload whose bytes arrived but whose share may not have (Slack's file id).
   */
  file?: OwedFile;
}

/** The file of an owed upload, as the worker that began it found it. */
export interface OwedFile {
  /** Absolute, symlink-free path in the thread's workspace. */
  path: string;
  name: string;
  sizeBytes: number;
  mimeType?: string;
}

/** A run's render state as recorded in the journal. */
export interface RenderSnapshot {
  v: 1;
  messages: OwedMessage[];
}

export function owedMessage(
  refs: MessageRef[],
  text: string,
  replyTo: MessageRef | undefined,
  posting?: { part: number; key: string },
): OwedMessage {
  return { refs: [...refs], text, ...(replyTo ? { replyTo } : {}), ...(posting ? { posting } : {}) };
}

/** The snapshot in `v`, or undefined when it is not one (damaged or from an unknown version). */
function parseSnapshot(v: unknown): RenderSnapshot | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const raw = v as { v?: unknown; messages?: unknown };
  if (raw.v !== 1 || !Array.isArray(raw.messages)) return undefined;
  const messages: OwedMessage[] = [];
  for (const m of raw.messages as unknown[]) {
    if (typeof m !== "object" || m === null) return undefined;
    const { refs, text, replyTo, ifUnsaved, posting, file } = m as Record<string, unknown>;
    if (!Array.isArray(refs) || !refs.every((r) => typeof r === "string") || typeof text !== "string")
      return undefined;
    const message = owedMessage(refs as string[], text, typeof replyTo === "string" ? replyTo : undefined);
    const alt = ifUnsaved as { timestamp?: unknown; text?: unknown } | undefined;
    if (typeof alt?.timestamp === "number" && typeof alt.text === "string")
      message.ifUnsaved = { timestamp: alt.timestamp, text: alt.text };
    const post = posting as { part?: unknown; key?: unknown; staged?: unknown } | undefined;
    if (typeof post?.part === "number" && typeof post.key === "string")
      message.posting = {
        part: post.part,
        key: post.key,
        ...(typeof post.staged === "string" ? { staged: post.staged } : {}),
      };
    const f = file as Partial<OwedFile> | undefined;
    if (typeof f?.path === "string" && typeof f.name === "string" && typeof f.sizeBytes === "number")
      message.file = {
        path: f.path,
        name: f.name,
        sizeBytes: f.sizeBytes,
        ...(typeof f.mimeType === "string" ? { mimeType: f.mimeType } : {}),
      };
    messages.push(message);
  }
  return { v: 1, messages };
}

export interface FinishOwedOptions {
  adapter: ChannelAdapter;
  threadKey: string;
  clock: Clock;
  limiter: RateLimiter;
  logger: StructuredLogger;
  /** Attempts per request when the platform answers 429 (default 5). */
  rateLimitAttempts?: number;
}

/**
 * Finishes `snapshot` in the chat, recording each newly posted id in `log` before the next request
 * (so a worker that dies while finishing leaves a snapshot the next one continues from). True once
 * the chat shows every message's final text; false when the platform refused (it stays owed).
 * `saved` tells whether the session holds an assistant message (by time stamp), see `ifUnsaved`.
 * `posted` holds the ids recorded the instant posts were answered (`RenderLog.posted`), by key: a
 * post recorded as intended (`posting`) is looked up there, then on the platform (`findPosted`),
 * and only posted again (with the same key, which Discord dedupes) when neither knows it.
 */
export async function finishOwedRender(
  o: FinishOwedOptions,
  snapshot: unknown,
  log: RenderLog,
  saved: (timestamp: number) => boolean = () => true,
  posted: ReadonlyMap<string, MessageRef> = new Map(),
): Promise<boolean> {
  const parsed = parseSnapshot(snapshot);
  if (!parsed) {
    o.logger.warn({ threadKey: o.threadKey }, "an owed render record is damaged; dropping it");
    return true;
  }
  const messages = parsed.messages.map((m) => ({ ...m, refs: [...m.refs] }));
  const record = () => log.owe({ v: 1, messages } satisfies RenderSnapshot);
  try {
    for (const m of messages) {
      if (m.file) {
        await finishUpload(o, m, m.file, log, posted, record);
        continue;
      }
      if (m.posting && m.refs[m.posting.part] === undefined && m.posting.part === m.refs.length) {
        const { key } = m.posting;
        const find = o.adapter.findPosted?.bind(o.adapter);
        const found =
          posted.get(key) ??
          (find
            ? await request(o, () => find(o.threadKey, key, m.replyTo ? { replyTo: m.replyTo } : {}))
            : undefined);
        if (found !== undefined) {
          m.refs.push(found);
          delete m.posting;
          await record();
        }
      } else delete m.posting;
      const final = m.ifUnsaved && !saved(m.ifUnsaved.timestamp) ? m.ifUnsaved.text : m.text;
      // Settled now: what is recorded from here on is this text.
      m.text = final;
      delete m.ifUnsaved;
      const text = redactSecrets(final);
      const parts = text.trim() === "" ? [] : splitMessage(text, o.adapter.capabilities.maxMessageLength);
      const unknown = m.posting;
      if (unknown && unknown.part >= parts.length && o.adapter.capabilities.idempotentPosts) {
        // A post whose answer never came, for a part that must not stay: where a repeat returns the
        // first message, repeat it to learn the id (a new message if it never arrived), then delete it.
        const ref = await request(o, () =>
          o.adapter.post(o.threadKey, "…", { format: "plain", idempotencyKey: unknown.key }),
        );
        log.posted(unknown.key, ref);
        m.refs[unknown.part] = ref;
        delete m.posting;
        await record();
      }
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i] as string;
        const ref = m.refs[i];
        if (ref !== undefined && (await edit(o, ref, part))) continue;
        const replyTo = i === 0 ? m.replyTo : undefined;
        // The intent first (a dead worker's intent for this part keeps its key), then the post.
        const repeated = m.posting?.part === i && ref === undefined;
        if (!repeated) {
          m.posting = { part: i, key: newPostKey() };
          await record();
        }
        const key = (m.posting as { key: string }).key;
        const sent = await request(o, () =>
          o.adapter.post(o.threadKey, part, {
            format: "markdown",
            idempotencyKey: key,
            ...(replyTo ? { replyTo } : {}),
          }),
        );
        log.posted(key, sent);
        m.refs[i] = sent;
        delete m.posting;
        await record();
        // Where a repeat returns the first message (Discord), it shows what the dead worker posted
        // (a half-written reply, an approval request): bring it to this part's text.
        if (repeated && o.adapter.capabilities.idempotentPosts) await edit(o, sent, part);
      }
      while (m.refs.length > parts.length) {
        const ref = m.refs.pop() as MessageRef;
        await request(o, () => o.adapter.delete(ref)).catch((e: unknown) => {
          if (!isChannelError(e, "not_found")) throw e;
        });
        await record();
      }
    }
    return true;
  } catch (e) {
    o.logger.warn(
      { threadKey: o.threadKey, err: e },
      "could not finish what an earlier run owed the chat; trying again with the next run",
    );
    return false;
  }
}

/**
 * Finishes an owed upload: nothing when its message is known; else the upload the journal names
 * is looked up (its recorded id, then the platform: Slack's file shares, the web chat's store) and
 * made again only when neither knows it, with the same key (Discord's nonce returns a repeat's first
 * message). A file that is gone, or is no longer the regular file it was, is said in its place.
 */
async function finishUpload(
  o: FinishOwedOptions,
  m: OwedMessage,
  file: OwedFile,
  log: RenderLog,
  posted: ReadonlyMap<string, MessageRef>,
  record: () => Promise<void>,
): Promise<void> {
  if (m.refs[0] !== undefined) return;
  const replyTo = m.replyTo;
  const posting = m.posting;
  if (posting) {
    const find = o.adapter.findUploaded?.bind(o.adapter);
    const found =
      posted.get(posting.key) ??
      (find
        ? await request(o, () =>
            find(o.threadKey, posting.key, {
              ...(replyTo ? { replyTo } : {}),
              ...(posting.staged ? { staged: posting.staged } : {}),
            }),
          )
        : undefined);
    if (found !== undefined) {
      m.refs.push(found);
      delete m.posting;
      await record();
      return;
    }
  }
  const key = posting?.key ?? newPostKey();
  if (!posting) {
    m.posting = { part: 0, key };
    await record();
  }
  const upload = o.adapter.uploadFile?.bind(o.adapter);
  const problem = upload ? await fileProblem(file) : "this channel takes no files";
  const sent = problem
    ? await request(o, () =>
        o.adapter.post(o.threadKey, `⚠️ ${file.name} could not be sent: ${problem}.`, {
          format: "markdown",
          idempotencyKey: key,
          ...(replyTo ? { replyTo } : {}),
        }),
      )
    : await request(o, () =>
        (upload as NonNullable<typeof upload>)(o.threadKey, file, {
          ...(m.text ? { caption: redactSecrets(m.text) } : {}),
          ...(replyTo ? { replyTo } : {}),
          idempotencyKey: key,
          onStaged: async (staged) => {
            m.posting = { part: 0, key, staged };
            await record();
          },
        }),
      );
  log.posted(key, sent);
  m.refs.push(sent);
  delete m.posting;
  await record();
}

/** Why an owed file cannot be uploaded any more (gone, or not the regular file it was), or undefined. */
async function fileProblem(file: OwedFile): Promise<string | undefined> {
  try {
    const st = await lstat(file.path);
    if (!st.isFile() || (await realpath(file.path)) !== file.path)
      return "it is no longer a regular file in the workspace";
    return undefined;
  } catch {
    return "it is no longer in the workspace";
  }
}

/** Edits `ref` to `text`; false when the message is gone (someone deleted it: post it again). */
async function edit(o: FinishOwedOptions, ref: MessageRef, text: string): Promise<boolean> {
  try {
    await request(o, () => o.adapter.edit(ref, text, { format: "markdown" }));
    return true;
  } catch (e) {
    if (isChannelError(e, "not_modified")) return true;
    if (isChannelError(e, "not_found")) return false;
    throw e;
  }
}

/** One platform request within the channel's budget, waiting out rate limits. */
async function request<T>(o: FinishOwedOptions, send: () => Promise<T>): Promise<T> {
  const channel = o.adapter.channelOf(o.threadKey);
  const rule = o.adapter.rateRuleFor?.(o.threadKey) ?? { limit: 1_000_000, windowMs: 1000 };
  for (let attempt = 1; ; attempt++) {
    const wait = await o.limiter.acquire(channel, rule);
    if (wait > 0) await o.clock.sleep(wait);
    try {
      return await send();
    } catch (e) {
      if (!isChannelError(e, "rate_limited") || attempt >= (o.rateLimitAttempts ?? 5)) throw e;
      const retry = e.retryAfterMs ?? 1000;
      await o.limiter.penalize(channel, retry);
    }
  }
}
