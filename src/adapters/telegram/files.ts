/**
 * Files on Telegram, both ways.
 *
 * In: `getFile` turns a `file_id` into a `file_path` (the Bot API refuses files over 20 MB with
 * "file is too big"), then the bytes come from `<api root>/file/bot<token>/<file_path>`. That
 * address holds the token, so it never appears in an error or a log line.
 *
 * Out: pictures Telegram shows as photos (JPEG, PNG, WebP up to 10 MB) go by `sendPhoto`, every
 * other file by `sendDocument` (up to 50 MB), streamed from disk, with the caption as Telegram HTML
 * (plain text when Telegram rejects the entities; at most 1,024 characters).
 */
import { type Api, InputFile } from "grammy";
import type { Message } from "grammy/types";
import { toPlainText, toTelegramHtml } from "../render/markdown.js";
import {
  type AttachmentRef,
  ChannelError,
  type DownloadedFile,
  type DownloadOptions,
  type OutgoingFile,
} from "../types.js";
import { isEntityParseError, toChannelError } from "./errors.js";

/** The Bot API's limits: getFile serves up to 20 MB, sendDocument takes up to 50 MB. */
export const TELEGRAM_FILE_LIMITS = { maxDownloadBytes: 20 * 1024 * 1024, maxUploadBytes: 50 * 1024 * 1024 };
const PHOTO_TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);
const PHOTO_LIMIT = 10 * 1024 * 1024;
const CAPTION_LIMIT = 1024;

/** The bytes of `ref` (see the header). */
export async function downloadTelegramFile(
  api: Api,
  token: string,
  apiRoot: string | undefined,
  ref: AttachmentRef,
  opts: DownloadOptions = {},
): Promise<DownloadedFile> {
  let path: string | undefined;
  let size: number | undefined;
  try {
    const file = await api.getFile(ref.id);
    path = file.file_path;
    size = file.file_size;
  } catch (e) {
    const err = toChannelError(e, "getFile");
    if (/file is too big/i.test(err.message)) throw new ChannelError("too_long", err.message, "telegram");
    throw err;
  }
  if (!path) throw new ChannelError("not_found", "Telegram getFile gave no file path", "telegram");
  const root = (apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
  let res: Response;
  try {
    res = await fetch(`${root}/file/bot${token}/${path}`, opts.signal ? { signal: opts.signal } : {});
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    throw new ChannelError("network", "Telegram file download failed (network)", "telegram");
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw new ChannelError(
      res.status === 404 ? "not_found" : res.status === 401 || res.status === 403 ? "forbidden" : "other",
      `Telegram answered the file download with HTTP ${res.status}`,
      "telegram",
    );
  }
  return {
    body: res.body as unknown as AsyncIterable<Uint8Array>,
    ...(size !== undefined ? { sizeBytes: size } : {}),
  };
}

/** Sends `file` with `caption` into a chat (see the header); `other` holds the thread and reply fields. */
export async function sendTelegramFile(
  api: Api,
  chatId: number,
  file: OutgoingFile,
  caption: string | undefined,
  other: Record<string, unknown>,
): Promise<Message> {
  if (file.sizeBytes > TELEGRAM_FILE_LIMITS.maxUploadBytes)
    throw new ChannelError(
      "too_long",
      `Telegram takes files of at most 50 MB from a bot; this one has ${file.sizeBytes} bytes`,
      "telegram",
    );
  const photo =
    file.mimeType !== undefined && PHOTO_TYPES.has(file.mimeType) && file.sizeBytes <= PHOTO_LIMIT;
  const method = photo ? "sendPhoto" : "sendDocument";
  const send = (text: string | undefined, html: boolean) => {
    const input = new InputFile(file.path, file.name);
    const extra = {
      ...other,
      ...(text ? { caption: text.slice(0, CAPTION_LIMIT) } : {}),
      ...(text && html ? { parse_mode: "HTML" as const } : {}),
    };
    return photo ? api.sendPhoto(chatId, input, extra) : api.sendDocument(chatId, input, extra);
  };
  try {
    // A long caption is cut as plain text: a cut inside HTML would break its entities.
    if (caption && caption.length > CAPTION_LIMIT) return await send(toPlainText(caption), false);
    return await send(caption ? toTelegramHtml(caption) : undefined, true);
  } catch (e) {
    if (!caption || !isEntityParseError(e)) throw toChannelError(e, method);
    try {
      return await send(toPlainText(caption), false);
    } catch (again) {
      throw toChannelError(again, method);
    }
  }
}
