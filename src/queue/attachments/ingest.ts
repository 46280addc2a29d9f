/**
 * The attachments of a run's new messages, fetched with the bot's credentials and put where the
 * agent works: each file streamed (never whole in memory) into the thread's workspace at
 * `attachments/<message>/<safe name>`, within the channel's limits per file and per message, its
 * type taken from its bytes; pictures shown to models that can see them (scaled down), described by
 * `models.vision` for those that cannot, or named by path. Nothing is dropped without a word: every
 * file that could not be taken is named in one notice in the thread (with the reason) and in the
 * user message the model reads, and a thread whose model cannot see pictures is told once.
 *
 * The worker calls it once per take, before formatting (`AttachmentIngest`). Delivering a message
 * again (a recovered worker) writes the same paths again.
 */
import { chown, mkdir, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type AttachmentRef,
  type ChannelAdapter,
  isChannelError,
  type Platform,
} from "../../adapters/types.js";
import { type Clock, systemClock } from "../../agent/clock.js";
import { errorMessage } from "../../agent/errors.js";
import type { Model } from "../../agent/llm/types.js";
import type { NoticeMemory } from "../../extensions/access/notices.js";
import type { WorkspaceQuota } from "../../extensions/tools/quota.js";
import { resolveInWorkspace } from "../../extensions/tools/workspace.js";
import type { AttachmentIngest, IngestRequest } from "../types.js";
import { type EffectiveFileLimits, effectiveLimits, type FilePolicy, formatBytes } from "./limits.js";
import { ATTACHMENTS_DIR, messageDirName, safeFileName, uniqueName } from "./names.js";
import { pictureForModel } from "./pictures.js";
import { type FileOwner, FileTooLargeError, saveStream } from "./save.js";
import { PICTURE_TYPES, sniffType } from "./sniff.js";
import type { IngestedFile, IngestedMessage } from "./types.js";
import { describePicture } from "./vision.js";

export interface AttachmentIngesterOptions {
  /** The adapter of a platform (its `download` and file limits); undefined: not enabled here. */
  adapterOf(platform: Platform): ChannelAdapter | undefined;
  /** The channel's file policy (`channels.<platform>.files`). */
  policyOf(platform: Platform): FilePolicy;
  /** The thread's workspace directory, created when missing (`ensureWorkspace`). */
  workspaceOf(threadKey: string): Promise<string>;
  /** The sandbox's account, which the files and folders are given to (when it is not ours). */
  owner?: FileOwner;
  /** The workspace quota (`tools.sandbox.limits.workspaceMb`): a file that would pass it is not taken. */
  quota?: WorkspaceQuota;
  /** Describes pictures for models without image input (`models.vision`). */
  vision?: Model;
  /** Remembers which threads were told their model cannot see pictures (told once). */
  notices: NoticeMemory;
  /** One download may take this long before it is given up (default 120 s). */
  downloadTimeoutMs?: number;
  clock?: Clock;
  onError?: (error: unknown, context: string) => void;
}

/** How long "the model cannot see pictures" is remembered per thread and model. */
const TOLD_TTL_MS = 30 * 24 * 3600_000;

export class AttachmentIngester implements AttachmentIngest {
  private readonly clock: Clock;

  constructor(private readonly o: AttachmentIngesterOptions) {
    this.clock = o.clock ?? systemClock;
  }

  async ingest(request: IngestRequest): Promise<IngestedMessage[]> {
    const out: IngestedMessage[] = [];
    for (const message of request.messages) {
      if (message.attachments.length === 0) out.push(message);
      else out.push(await this.take(request, message));
    }
    return out;
  }

  /** The files of one message, each saved, refused or failed; the thread is told what went wrong. */
  private async take(r: IngestRequest, message: IngestedMessage): Promise<IngestedMessage> {
    const adapter = this.o.adapterOf(message.platform);
    const limits = effectiveLimits(this.o.policyOf(message.platform), adapter?.capabilities.files);
    let files: IngestedFile[];
    if (!adapter?.download || !limits.enabled) {
      const why = limits.enabled
        ? "files cannot be fetched from this channel"
        : "this channel is set not to take files (channels.<platform>.files.enabled)";
      files = message.attachments.map((a) => ({ name: displayName(a), refused: why }));
    } else {
      try {
        files = await this.save(r, message, adapter, limits);
      } catch (e) {
        // The workspace itself failed (disk full, a path refused): every file is named as failed.
        this.o.onError?.(e, `saving the files of a message in ${r.threadKey}`);
        const why = `it could not be saved (${errorMessage(e)})`;
        files = message.attachments.map((a) => ({ name: displayName(a), refused: why }));
      }
    }
    await this.pictures(r, files);
    const refused = files.filter((f) => f.refused);
    if (refused.length > 0) await r.notify(refusedNotice(refused, files.length));
    return { ...message, files };
  }

  private async save(
    r: IngestRequest,
    message: IngestedMessage,
    adapter: ChannelAdapter,
    limits: EffectiveFileLimits,
  ): Promise<IngestedFile[]> {
    const workspace = await this.o.workspaceOf(r.threadKey);
    const relDir = join(ATTACHMENTS_DIR, messageDirName(message.messageId, `m${message.timestamp}`));
    const dir = await this.folder(workspace, relDir);
    const files: IngestedFile[] = [];
    const taken = new Set<string>();
    let total = 0;
    // What the workspace quota leaves, measured once per message: the files below count against it.
    const free = this.o.quota ? (await this.o.quota.standing(workspace)).freeBytes : Number.POSITIVE_INFINITY;
    for (const [i, ref] of message.attachments.entries()) {
      const name = displayName(ref);
      if (r.signal.aborted) {
        files.push({ name, refused: "the run was stopped before it was fetched" });
        continue;
      }
      if (i >= limits.maxFiles) {
        files.push({ name, refused: `only the first ${limits.maxFiles} files of a message are taken` });
        continue;
      }
      const left = limits.maxMessageBytes - total;
      const room = free - total;
      const max = Math.min(limits.maxFileBytes, left, room);
      const stated = ref.sizeBytes;
      if (stated !== undefined && stated > max) {
        const why = stated > room ? this.full(room) : tooLarge(stated, limits, left);
        files.push({ name, sizeBytes: stated, refused: why });
        continue;
      }
      const safe = uniqueName(safeFileName(ref.name, `file-${i + 1}`), taken);
      try {
        const bytes = await this.fetch(adapter, ref, dir, safe, max, r.signal);
        total += bytes;
        const sniffed = await sniffType(join(dir, safe), safe, bytes);
        let final = safe;
        if (!safe.includes(".") && sniffed.ext) {
          final = uniqueName(`${safe}.${sniffed.ext}`, taken);
          await rename(join(dir, safe), join(dir, final));
        }
        taken.add(final);
        files.push({ name, path: `${relDir}/${final}`, sizeBytes: bytes, mimeType: sniffed.mimeType });
      } catch (e) {
        const seen = e instanceof FileTooLargeError ? e.seenBytes : undefined;
        files.push({
          name,
          ...(seen !== undefined ? { sizeBytes: seen } : {}),
          refused:
            e instanceof FileTooLargeError
              ? e.seenBytes > room
                ? this.full(room)
                : tooLarge(e.seenBytes, limits, left)
              : `the download failed: ${downloadError(e, adapter.platform)}`,
        });
      }
    }
    return files;
  }

  /** Why a file that does not fit in what the workspace quota leaves is not taken. */
  private full(room: number): string {
    const quota = this.o.quota;
    return quota
      ? `the thread's workspace has ${formatBytes(Math.max(0, room))} left of its ${quota.limitMb} MB quota (tools.sandbox.limits.workspaceMb)`
      : "the thread's workspace is full";
  }

  /** `rel` made inside the workspace (checked against symlinks leading out) and given to the owner. */
  private async folder(workspace: string, rel: string): Promise<string> {
    let path = workspace;
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) {
      path = await resolveInWorkspace(workspace, parts.slice(0, i).join("/"));
      await mkdir(path, { recursive: false }).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw e;
      });
      if (!(await stat(path)).isDirectory()) throw new Error(`${rel} is not a folder in the workspace`);
      if (this.o.owner) await chown(path, this.o.owner.uid, this.o.owner.gid);
    }
    return path;
  }

  /** Downloads `ref` into `dir/name` within `max` bytes and the download timeout. */
  private async fetch(
    adapter: ChannelAdapter,
    ref: AttachmentRef,
    dir: string,
    name: string,
    max: number,
    runSignal: AbortSignal,
  ): Promise<number> {
    const timeout = new AbortController();
    const ms = this.o.downloadTimeoutMs ?? 120_000;
    const timer = this.clock.sleep(ms, timeout.signal).then(
      () => timeout.abort(new Error(`it took longer than ${Math.round(ms / 1000)} s`)),
      () => {},
    );
    const signal = AbortSignal.any([runSignal, timeout.signal]);
    try {
      const download = (adapter.download as NonNullable<ChannelAdapter["download"]>).bind(adapter);
      const file = await download(ref, { signal });
      if (file.sizeBytes !== undefined && file.sizeBytes > max)
        throw new FileTooLargeError(max, file.sizeBytes);
      return await saveStream(aborting(file.body, signal), dir, name, max, this.o.owner);
    } catch (e) {
      if (timeout.signal.aborted) throw timeout.signal.reason;
      throw e;
    } finally {
      timeout.abort();
      await timer;
    }
  }

  /** Pictures: shown to a model that sees, described by the vision model, or named by path. */
  private async pictures(r: IngestRequest, files: IngestedFile[]): Promise<void> {
    const pictures = files.filter((f) => f.path && f.mimeType && PICTURE_TYPES.has(f.mimeType));
    if (pictures.length === 0) return;
    const sees = r.model.input.includes("image");
    const vision = !sees && this.o.vision?.input.includes("image") ? this.o.vision : undefined;
    if (!sees && !vision) {
      await this.tellOnce(
        r,
        `The model ${modelName(r.model)} cannot see pictures, so it gets ${list(pictures)} as a file in its workspace (${pictures[0]?.path}). \`/model\` switches to one that can.`,
      );
      return;
    }
    const workspace = await this.o.workspaceOf(r.threadKey);
    for (const f of pictures) {
      try {
        const picture = await pictureForModel(
          join(workspace, f.path as string),
          f.mimeType as string,
          f.sizeBytes ?? 0,
        );
        if (sees) {
          f.image = picture.image;
          continue;
        }
        const described = await describePicture(vision as Model, picture.image, f.name, r.signal);
        if ("text" in described) f.description = described.text;
        else
          this.o.onError?.(new Error(described.error), `describing the picture ${f.path} in ${r.threadKey}`);
      } catch (e) {
        this.o.onError?.(e, `preparing the picture ${f.path} for the model in ${r.threadKey}`);
      }
    }
    if (vision && pictures.some((f) => f.description))
      await this.tellOnce(
        r,
        `The model ${modelName(r.model)} cannot see pictures; ${modelName(vision)} describes ${list(pictures)} for it, and the file is in its workspace (${pictures[0]?.path}).`,
      );
  }

  private async tellOnce(r: IngestRequest, text: string): Promise<void> {
    const key = `pictures:${r.threadKey}:${modelName(r.model)}`;
    let first = true;
    try {
      first = await this.o.notices.claim(key, TOLD_TTL_MS);
    } catch (e) {
      this.o.onError?.(e, `remembering a notice in ${r.threadKey}`);
    }
    if (first) await r.notify(`ℹ️ ${text}`);
  }
}

function displayName(ref: AttachmentRef): string {
  const name = (ref.name ?? "")
    .replace(/[\p{Cc}\s]+/gu, " ")
    .trim()
    .slice(0, 200);
  return name || (ref.kind === "image" ? "a photo" : `a ${ref.kind === "other" ? "file" : ref.kind}`);
}

function modelName(model: Model): string {
  return `${model.provider}/${model.id}`;
}

function list(files: readonly IngestedFile[]): string {
  const names = files.map((f) => f.name);
  return names.length === 1 ? (names[0] as string) : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

function tooLarge(size: number, limits: EffectiveFileLimits, left: number): string {
  if (size > limits.maxFileBytes)
    return `it is ${formatBytes(size)}, larger than the ${formatBytes(limits.maxFileBytes)} per file this channel takes`;
  return `the message's files together are more than the ${formatBytes(limits.maxMessageBytes)} this channel takes from one message (${formatBytes(Math.max(0, left))} were left)`;
}

function downloadError(e: unknown, platform: Platform): string {
  if (isChannelError(e, "forbidden", "unauthorized"))
    return `${platform} refused it (${errorMessage(e)}); check the bot's file permissions (docs/channels.md, "Files")`;
  if (isChannelError(e, "not_found")) return `${platform} no longer has it`;
  return errorMessage(e);
}

function refusedNotice(refused: readonly IngestedFile[], of: number): string {
  const lines = refused.map(
    (f) => `• ${f.name}${f.sizeBytes !== undefined ? ` (${formatBytes(f.sizeBytes)})` : ""}: ${f.refused}`,
  );
  const head =
    of === 1
      ? "I could not take the file you sent:"
      : `I could not take ${refused.length} of the ${of} files you sent:`;
  return `⚠️ ${head}\n${lines.join("\n")}`;
}

/** `body`, ending with `signal`'s reason as soon as it aborts (a stalled download included). */
async function* aborting(body: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncIterable<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]();
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(signal.reason ?? new Error("stopped"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void iterator.return?.()?.catch?.(() => {});
  }
}
