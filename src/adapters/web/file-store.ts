/**
 * The web chat store of the embedded mode: the state in memory (`MemoryWebChatStore`), every change
 * appended to one JSONL file per conversation under `<dataDir>/web/` before the call resolves, and
 * the files read back at first use, so conversations survive a restart.
 *
 * Each line is a whole record, and the last record of a message wins, so replaying a file is
 * idempotent and a torn last line (a crash mid-write) only loses that line:
 *
 * | line | meaning |
 * |---|---|
 * | `{"t":"c","c":{…}}` | the conversation (title, kind, times) |
 * | `{"t":"m","m":{…}}` | a message as it is now (posted, edited or reacted to) |
 * | `{"t":"d","id":"m3"}` | message m3 was removed |
 * | `{"t":"k","id":"<client id>","r":{…}}` | what a page's request with that client id left |
 * | `{"t":"s","seq":12}` | the highest message number used (written by compaction) |
 *
 * A streamed reply is edited several times a second, so a file grows faster than its state: once the
 * lines appended since the last rewrite exceed four times the state's size (and 256 KB), the file is
 * rewritten from the state (temporary file, then rename).
 */
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StoredConversation } from "./conversation-state.js";
import { isConversationId } from "./ids.js";
import { type ConversationState, MemoryWebChatStore, type WebStoreJournal } from "./memory-store.js";
import type { WebMessage } from "./model.js";
import type { ClientRecord, WebStoreLimits } from "./store-types.js";

export interface FileWebChatStoreOptions extends WebStoreLimits {
  /** The folder of the conversation files (`<dataDir>/web`); created when missing. */
  dir: string;
  /** Told about files or lines that could not be read (they are skipped). */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

type Line =
  | { t: "c"; c: StoredConversation }
  | { t: "m"; m: WebMessage }
  | { t: "d"; id: string }
  | { t: "k"; id: string; r: ClientRecord }
  | { t: "s"; seq: number };

const MIN_REWRITE_BYTES = 256 * 1024;

export class FileWebChatStore extends MemoryWebChatStore {
  constructor(options: FileWebChatStoreOptions) {
    const journal = new FileJournal(options.dir);
    super({
      ...options,
      journal,
      load: () => loadAll(options.dir, options.onWarning ?? (() => {})),
    });
    journal.stateOf = (id) => this.stateOf(id);
  }
}

/** Appends records per conversation, in order, and rewrites a file that has grown too much. */
class FileJournal implements WebStoreJournal {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly grown = new Map<string, { appended: number; base: number }>();
  private made: Promise<unknown> | undefined;
  /** The state a rewrite writes (the store's, set once it exists). */
  stateOf: (conversationId: string) => ConversationState | undefined = () => undefined;

  constructor(private readonly dir: string) {}

  conversation(c: StoredConversation): Promise<void> {
    return this.append(c.id, { t: "c", c });
  }

  message(m: WebMessage): Promise<void> {
    return this.append(m.conversationId, { t: "m", m });
  }

  messageRemoved(conversationId: string, messageId: string): Promise<void> {
    return this.append(conversationId, { t: "d", id: messageId });
  }

  client(conversationId: string, clientId: string, record: ClientRecord): Promise<void> {
    return this.append(conversationId, { t: "k", id: clientId, r: record });
  }

  conversationRemoved(conversationId: string): Promise<void> {
    this.grown.delete(conversationId);
    return this.enqueue(conversationId, () => rm(this.file(conversationId), { force: true }));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.chains.values()]);
  }

  private file(conversationId: string): string {
    return join(this.dir, `${conversationId}.jsonl`);
  }

  private append(conversationId: string, line: Line): Promise<void> {
    const text = `${JSON.stringify(line)}\n`;
    return this.enqueue(conversationId, async () => {
      await appendFile(this.file(conversationId), text, { mode: 0o600 });
      const g = this.grown.get(conversationId) ?? { appended: 0, base: 0 };
      g.appended += Buffer.byteLength(text);
      this.grown.set(conversationId, g);
      if (g.appended > Math.max(MIN_REWRITE_BYTES, 4 * g.base)) await this.rewrite(conversationId);
    });
  }

  /** Runs `step` after every earlier step of the conversation (a failed step does not block later ones). */
  private enqueue(conversationId: string, step: () => Promise<unknown>): Promise<void> {
    this.made ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    const made = this.made;
    const previous = this.chains.get(conversationId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => made)
      .then(step)
      .then(() => {});
    this.chains.set(conversationId, next);
    void next.finally(() => {
      if (this.chains.get(conversationId) === next) this.chains.delete(conversationId);
    });
    return next;
  }

  private async rewrite(conversationId: string): Promise<void> {
    const state = this.stateOf(conversationId);
    if (!state) return;
    const text = serialize(state);
    const file = this.file(conversationId);
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
    this.grown.set(conversationId, { appended: 0, base: Buffer.byteLength(text) });
  }
}

/** The whole state of one conversation as file lines. */
function serialize(state: ConversationState): string {
  const lines: Line[] = [
    { t: "c", c: state.conversation },
    { t: "s", seq: state.seq },
    ...state.messages.map((m): Line => ({ t: "m", m })),
    ...state.clients.map(([id, r]): Line => ({ t: "k", id, r })),
  ];
  return lines.map((l) => `${JSON.stringify(l)}\n`).join("");
}

async function loadAll(
  dir: string,
  warn: (message: string, detail: Record<string, unknown>) => void,
): Promise<ConversationState[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const states: ConversationState[] = [];
  for (const name of names) {
    const id = name.endsWith(".jsonl") ? name.slice(0, -".jsonl".length) : "";
    if (!isConversationId(id)) continue;
    const state = replay(id, await readFile(join(dir, name), "utf8"), (line) =>
      warn("web chat: skipped an unreadable line", { file: name, line }),
    );
    if (state) states.push(state);
    else warn("web chat: skipped a conversation file without its conversation record", { file: name });
  }
  return states;
}

/** Folds a file's lines into the conversation's state (undefined without a conversation record). */
function replay(
  conversationId: string,
  text: string,
  onBadLine: (lineNumber: number) => void,
): ConversationState | undefined {
  let conversation: StoredConversation | undefined;
  const messages = new Map<string, WebMessage>();
  const clients = new Map<string, ClientRecord>();
  let seq = 0;
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    if (!raw.trim()) return;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      onBadLine(i + 1);
      return;
    }
    switch (line.t) {
      case "c":
        if (line.c?.id === conversationId) conversation = line.c;
        break;
      case "m":
        if (line.m?.conversationId === conversationId && typeof line.m.id === "string") {
          messages.set(line.m.id, line.m);
          seq = Math.max(seq, Number(line.m.id.slice(1)) || 0);
        }
        break;
      case "d":
        messages.delete(line.id);
        seq = Math.max(seq, Number(String(line.id).slice(1)) || 0);
        break;
      case "k":
        clients.delete(line.id);
        clients.set(line.id, line.r);
        break;
      case "s":
        seq = Math.max(seq, line.seq);
        break;
      default:
        onBadLine(i + 1);
    }
  });
  if (!conversation) return undefined;
  return { conversation, messages: [...messages.values()], clients: [...clients], seq };
}
