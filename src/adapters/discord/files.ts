/**
 * Files on Discord, both ways.
 *
 * In: an attachment's URL is on Discord's CDN and signed (`ex`, `is`, `hm`); it needs no token, but
 * it expires (24 hours). An expired or refused link is signed again through
 * `POST /attachments/refresh-urls` with the bot token and fetched once more, so an old message's
 * file still downloads. The bot token itself never goes to the CDN.
 *
 * Out: a message with the file attached (multipart: `payload_json` and `files[0]`, the file streamed
 * from disk), the caption as its content, sent with the idempotency key as its `nonce` with
 * `enforce_nonce`, so a repeat within minutes returns the first message instead of a second file.
 */
import { openAsBlob } from "node:fs";
import { Routes } from "discord.js";
import {
  type AttachmentRef,
  ChannelError,
  type DownloadedFile,
  type DownloadOptions,
  type OutgoingFile,
} from "../types.js";
import type { DiscordApi, RawMessage } from "./api.js";
import { toChannelError } from "./errors.js";

/**
 * Discord's limits: attachments up to 500 MB can arrive (Nitro), and a bot may attach 10 MB in a
 * server without boosts (more with boosts: `channels.discord.uploadLimitMb`).
 */
export const DISCORD_DOWNLOAD_LIMIT = 500 * 1024 * 1024;
export const DISCORD_UPLOAD_LIMIT = 10 * 1024 * 1024;

const CDN_HOSTS = new Set(["cdn.discordapp.com", "media.discordapp.net"]);

async function fetchFile(url: string, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, signal ? { signal } : {});
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ChannelError("network", "Discord attachment download failed (network)", "discord");
  }
}

/** Whether `url` is Discord's CDN (or the configured API's host: tests, proxies). */
function onCdn(url: string, apiUrl: string | undefined): boolean {
  const u = new URL(url);
  if (u.protocol === "https:" && CDN_HOSTS.has(u.hostname)) return true;
  return apiUrl !== undefined && new URL(apiUrl).origin === u.origin;
}

/** The bytes of an attachment; an expired link is refreshed once (see the header). */
export async function downloadAttachment(
  api: DiscordApi,
  apiUrl: string | undefined,
  ref: AttachmentRef,
  opts: DownloadOptions = {},
): Promise<DownloadedFile> {
  if (!ref.url)
    throw new ChannelError("not_found", `Discord gave no address for attachment ${ref.id}`, "discord");
  if (!onCdn(ref.url, apiUrl))
    throw new ChannelError("forbidden", `the attachment's address is not Discord's CDN`, "discord");
  let res = await fetchFile(ref.url, opts.signal);
  if (res.status === 403 || res.status === 404) {
    await res.body?.cancel().catch(() => {});
    const refreshed = await refreshUrl(api, ref.url);
    if (refreshed && onCdn(refreshed, apiUrl)) res = await fetchFile(refreshed, opts.signal);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw new ChannelError(
      res.status === 404 ? "not_found" : res.status === 403 ? "forbidden" : "other",
      `Discord's CDN answered the attachment download with HTTP ${res.status}`,
      "discord",
    );
  }
  const length = Number(res.headers.get("content-length") ?? Number.NaN);
  return {
    body: res.body as unknown as AsyncIterable<Uint8Array>,
    ...(Number.isFinite(length) ? { sizeBytes: length } : {}),
  };
}

/** A freshly signed link for `url` (`POST /attachments/refresh-urls`); undefined when Discord gives none. */
async function refreshUrl(api: DiscordApi, url: string): Promise<string | undefined> {
  try {
    const r = (await api.rest.post("/attachments/refresh-urls", {
      body: { attachment_urls: [url] },
    })) as { refreshed_urls?: Array<{ refreshed?: string }> };
    return r.refreshed_urls?.[0]?.refreshed;
  } catch (e) {
    throw toChannelError(e, "refresh attachment links");
  }
}

/** Posts `file` into `channel` as an attachment (see the header); `body` holds the message fields. */
export async function postAttachment(
  api: DiscordApi,
  channel: string,
  file: OutgoingFile,
  body: Record<string, unknown>,
): Promise<RawMessage> {
  if (file.sizeBytes > DISCORD_UPLOAD_LIMIT)
    throw new ChannelError(
      "too_long",
      `Discord takes files of at most ${DISCORD_UPLOAD_LIMIT / 1024 / 1024} MB from a bot; this one has ${file.sizeBytes} bytes`,
      "discord",
    );
  const form = new FormData();
  form.append("payload_json", JSON.stringify({ ...body, attachments: [{ id: 0, filename: file.name }] }));
  const blob = await openAsBlob(file.path, file.mimeType ? { type: file.mimeType } : {});
  form.append("files[0]", blob, file.name);
  try {
    return (await api.rest.post(Routes.channelMessages(channel), {
      body: form,
      passThroughBody: true,
    })) as RawMessage;
  } catch (e) {
    const err = toChannelError(e, "send file");
    const status = (e as { status?: unknown }).status;
    if (status === 413) throw new ChannelError("too_long", err.message, "discord");
    throw err;
  }
}
