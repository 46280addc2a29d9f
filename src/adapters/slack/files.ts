/**
 * Files on Slack, both ways.
 *
 * In: a file's `url_private` answers only with the bot token (`Authorization: Bearer xoxb-…`, scope
 * `files:read`); without it Slack answers with a sign-in page instead of the file, which is refused
 * here rather than saved as the file. The token goes only to Slack's own hosts (or the configured
 * Web API's, for tests and proxies).
 *
 * Out: Slack's external upload flow (scope `files:write`): `files.getUploadURLExternal` gives an
 * upload URL and a file id, the bytes go there (streamed from disk), and
 * `files.completeUploadExternal` shares the file into the thread with its caption. The file id is
 * handed to `onStaged` (the render journal records it) before the share, so a worker that recovers
 * an upload asks `files.info` whether that file was shared, instead of sharing a second copy.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import {
  type AttachmentRef,
  ChannelError,
  type DownloadedFile,
  type DownloadOptions,
  type MessageRef,
  type OutgoingFile,
  type UploadOptions,
} from "../types.js";
import { decodeThreadKey, encodeMessageRef } from "./ids.js";
import { postThread } from "./posted.js";
import { slackText } from "./text.js";
import type { SlackWeb } from "./web.js";

type Json = Record<string, unknown>;

/** Slack's largest file (1 GB); the channel's own policy is usually far lower. */
export const SLACK_FILE_LIMITS = { maxDownloadBytes: 1024 ** 3, maxUploadBytes: 1024 ** 3 };

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export class SlackFiles {
  constructor(
    private readonly web: SlackWeb,
    private readonly token: string,
    /** The Web API's base URL (its host may serve files too: tests, proxies). */
    private readonly apiUrl: string | undefined,
  ) {}

  /** Whether the bot token may be sent to `url`: Slack's own hosts, or the configured API's. */
  private trusted(url: URL): boolean {
    if (url.protocol === "https:" && (url.hostname === "slack.com" || url.hostname.endsWith(".slack.com")))
      return true;
    return this.apiUrl !== undefined && new URL(this.apiUrl).origin === url.origin;
  }

  async download(ref: AttachmentRef, opts: DownloadOptions = {}): Promise<DownloadedFile> {
    let raw = ref.url;
    if (!raw) {
      const info = await this.web.call("files.info", { file: ref.id });
      raw = str((info.file as Json | undefined)?.url_private);
    }
    if (!raw)
      throw new ChannelError("not_found", `Slack gives no download address for file ${ref.id}`, "slack");
    const url = new URL(raw);
    if (!this.trusted(url))
      throw new ChannelError(
        "forbidden",
        `the file's address (${url.host}) is not Slack's; the bot token is not sent there`,
        "slack",
      );
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${this.token}` },
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new ChannelError("network", "Slack file download failed (network)", "slack");
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => {});
      const kind =
        res.status === 404 ? "not_found" : res.status === 401 || res.status === 403 ? "forbidden" : "other";
      throw new ChannelError(kind, `Slack answered the file download with HTTP ${res.status}`, "slack");
    }
    const type = res.headers.get("content-type") ?? "";
    if (type.startsWith("text/html") && !/\.html?$/i.test(ref.name ?? "")) {
      await res.body.cancel().catch(() => {});
      throw new ChannelError(
        "forbidden",
        "Slack answered with a sign-in page instead of the file: give the app the files:read scope and reinstall it",
        "slack",
      );
    }
    const length = Number(res.headers.get("content-length") ?? Number.NaN);
    return {
      body: res.body as unknown as AsyncIterable<Uint8Array>,
      ...(Number.isFinite(length) ? { sizeBytes: length } : {}),
    };
  }

  async upload(threadKey: string, file: OutgoingFile, opts: UploadOptions = {}): Promise<MessageRef> {
    const t = decodeThreadKey(threadKey);
    const threadTs = await postThread(this.web, threadKey, opts.replyTo);
    const staged = await this.web.call("files.getUploadURLExternal", {
      filename: file.name,
      length: file.sizeBytes,
    });
    const uploadUrl = str(staged.upload_url);
    const fileId = str(staged.file_id);
    if (!uploadUrl || !fileId)
      throw new ChannelError("other", "Slack files.getUploadURLExternal gave no upload address", "slack");
    let res: Response;
    try {
      res = await fetch(uploadUrl, {
        method: "POST",
        headers: {
          "content-type": "application/octet-stream",
          "content-length": String(file.sizeBytes),
        },
        body: Readable.toWeb(createReadStream(file.path)) as ReadableStream<Uint8Array>,
        duplex: "half",
      } as RequestInit);
    } catch {
      throw new ChannelError("network", "Slack file upload failed (network)", "slack");
    }
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok)
      throw new ChannelError(
        res.status === 413 ? "too_long" : "other",
        `Slack answered the file upload with HTTP ${res.status}`,
        "slack",
      );
    await opts.onStaged?.(fileId);
    const done = await this.web.call("files.completeUploadExternal", {
      files: JSON.stringify([{ id: fileId, title: file.name }]),
      channel_id: t.channel,
      ...(threadTs ? { thread_ts: threadTs } : {}),
      ...(opts.caption ? { initial_comment: slackText(opts.caption, "markdown") } : {}),
    });
    // Slack answers with the file's id and title only; the message that shares it is in its shares
    // (filled in moments later on a busy workspace: then the file's id stands for it).
    let shared = shareOf((done.files as Json[] | undefined)?.[0], t.channel, threadTs);
    if (!shared) {
      const info = await this.web.call("files.info", { file: fileId }).catch(() => ({}) as Json);
      shared = shareOf(info.file as Json | undefined, t.channel, threadTs);
    }
    return encodeMessageRef(t.team, t.channel, shared ?? `file.${fileId}`);
  }

  /** The message that shared staged file `staged` into `threadKey`'s channel, if Slack shows one. */
  async findUploaded(
    threadKey: string,
    opts: { replyTo?: MessageRef; staged?: string } = {},
  ): Promise<MessageRef | undefined> {
    if (!opts.staged) return undefined;
    const t = decodeThreadKey(threadKey);
    let info: Json;
    try {
      info = await this.web.call("files.info", { file: opts.staged });
    } catch (e) {
      if (e instanceof ChannelError && e.kind === "not_found") return undefined;
      throw e;
    }
    const threadTs = await postThread(this.web, threadKey, opts.replyTo);
    const ts = shareOf(info.file as Json | undefined, t.channel, threadTs);
    return ts ? encodeMessageRef(t.team, t.channel, ts) : undefined;
  }
}

/** The ts of the message that shared `file` into `channel` (in thread `threadTs`), from its `shares`. */
function shareOf(file: Json | undefined, channel: string, threadTs: string | undefined): string | undefined {
  const shares = (file?.shares ?? {}) as Json;
  for (const scope of ["public", "private"]) {
    const list = ((shares[scope] as Json | undefined)?.[channel] ?? []) as Json[];
    const match = list.find((s) =>
      threadTs ? str(s.thread_ts) === threadTs || str(s.ts) === threadTs : true,
    );
    const ts = str(match?.ts);
    if (ts) return ts;
  }
  return undefined;
}
