/**
 * The last gate before a platform: every text a process posts or edits into a chat, whoever wrote it
 * (the renderer, an approval request showing a tool's arguments, an extension's notice, a gateway
 * notice, a file's caption), goes through the one secret scrubber (src/agent/llm/redact.ts), with the exact secret
 * values of the running config masked too. The gateway wraps every adapter it builds with it.
 */
import { redactSecrets } from "../agent/llm/redact.js";
import type {
  ChannelAdapter,
  EditOptions,
  MessageRef,
  OutgoingFile,
  PostOptions,
  UploadOptions,
} from "./types.js";

/**
 * `adapter` with the text of `post` and `edit` (and an upload's caption) scrubbed of credential
 * shapes and of `secrets`.
 * Everything else (capabilities, optional methods, errors, results) is the adapter's own.
 */
export function redactOutbound(adapter: ChannelAdapter, secrets: readonly string[] = []): ChannelAdapter {
  const post = (threadKey: string, text: string, opts?: PostOptions) =>
    adapter.post(threadKey, redactSecrets(text, secrets), opts);
  const edit = (ref: MessageRef, text: string, opts?: EditOptions) =>
    adapter.edit(ref, redactSecrets(text, secrets), opts);
  const upload = adapter.uploadFile?.bind(adapter);
  const uploadFile = upload
    ? (threadKey: string, file: OutgoingFile, opts: UploadOptions = {}) =>
        upload(threadKey, file, {
          ...opts,
          ...(opts.caption !== undefined ? { caption: redactSecrets(opts.caption, secrets) } : {}),
        })
    : undefined;
  return new Proxy(adapter, {
    get(target, property) {
      if (property === "post") return post;
      if (property === "edit") return edit;
      if (property === "uploadFile") return uploadFile;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
