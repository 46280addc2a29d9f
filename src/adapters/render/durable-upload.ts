/**
 * A file posted into a thread (`send_file`) under the render journal's protocol, like every other
 * post (docs/runtime.md, "The render journal"): the upload's intent (its key, the file, its caption)
 * is recorded before the upload; the platform's staged token (Slack's file id) before the share;
 * the message id the instant the platform answers; then the record goes. A worker killed at any
 * point leaves a record the next holder finishes once (`finishOwedRender`): it finds the upload by
 * its key or token, or uploads the file again under the same key.
 */
import type { ChannelAdapter, MessageRef, OutgoingFile, RenderLog } from "../types.js";
import { newPostKey } from "./live-message.js";
import { type OwedFile, owedMessage, type RenderSnapshot } from "./owed.js";

/** Uploads `file` into `threadKey` with `caption`, recorded in `log`; resolves with the message. */
export async function journaledUpload(
  adapter: ChannelAdapter,
  threadKey: string,
  log: RenderLog,
  file: OutgoingFile,
  opts: { caption?: string; replyTo?: MessageRef } = {},
): Promise<MessageRef> {
  const upload = adapter.uploadFile?.bind(adapter);
  if (!upload) throw new Error(`The ${adapter.platform} channel cannot post files.`);
  const key = newPostKey();
  const owed: OwedFile = {
    path: file.path,
    name: file.name,
    sizeBytes: file.sizeBytes,
    ...(file.mimeType ? { mimeType: file.mimeType } : {}),
  };
  const owe = (refs: MessageRef[], posting?: { part: number; key: string; staged?: string }) =>
    log.owe({
      v: 1,
      messages: [{ ...owedMessage(refs, opts.caption ?? "", opts.replyTo, posting), file: owed }],
    } satisfies RenderSnapshot);
  await owe([], { part: 0, key });
  if (!log.held()) throw new Error(`The thread ${threadKey} is held by another worker now; nothing sent.`);
  const ref = await upload(threadKey, file, {
    ...(opts.caption ? { caption: opts.caption } : {}),
    ...(opts.replyTo ? { replyTo: opts.replyTo } : {}),
    idempotencyKey: key,
    onStaged: (staged) => owe([], { part: 0, key, staged }),
  });
  // No await between the platform's answer and this: the id is on its way to the journal now.
  log.posted(key, ref);
  await log.done();
  return ref;
}
