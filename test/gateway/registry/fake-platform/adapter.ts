/**
 * A small chat platform that exists only in this test: it receives messages through a webhook
 * route (`POST <path>` with a JSON body and the token in `x-fake-token`), serves a page under
 * `/fake/page` (as the web chat serves its own), keeps what the bot posts in memory, and answers its
 * credential check from the token. Everything is DMs with one user.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Env, Hono } from "hono";
import type {
  AdapterCapabilities,
  ChannelAdapter,
  ChannelMount,
  ChannelRoute,
  ConnectionStatus,
  CredentialProbe,
  InboundHandlers,
  MessageRef,
  Platform,
} from "../../../../src/adapters/types.js";

/** The platform's name. `Platform` lists the built-in ones; a test platform widens it here. */
const FAKE = "fake" as Platform;

export interface FakeAdapterConfig {
  token: string;
  path: string;
}

export class FakeAdapter implements ChannelAdapter {
  readonly platform = FAKE;
  readonly capabilities: AdapterCapabilities = {
    maxMessageLength: 4000,
    editIntervalMs: 1000,
    markdown: "plain",
    nativeCommands: false,
    reactions: false,
    edits: true,
    typingDurationMs: 0,
    history: false,
  };
  /** What the bot's messages say now, by thread key, in order of posting. */
  readonly posted = new Map<string, string[]>();
  private readonly where = new Map<MessageRef, { threadKey: string; index: number }>();
  /** How many times `switchboard check` asked the platform. */
  probes = 0;
  private handlers: InboundHandlers | undefined;
  private seq = 0;

  constructor(private readonly config: FakeAdapterConfig) {}

  async start(handlers: InboundHandlers): Promise<void> {
    this.handlers = handlers;
  }
  async stop(): Promise<void> {
    this.handlers = undefined;
  }
  connections(): ConnectionStatus[] {
    return this.handlers ? [{ name: "fake:webhook", state: "connected", since: 0 }] : [];
  }

  routes(): ChannelRoute[] {
    return [{ method: "POST", path: this.config.path, handle: (req, res) => void this.receive(req, res) }];
  }

  mounts(): ChannelMount[] {
    const app = <E extends Env>() => {
      const page = new Hono<E>();
      page.get("/", (c) => c.text("the fake platform's page"));
      return page;
    };
    return [{ prefix: "/fake/page", app }];
  }

  probe(): CredentialProbe[] {
    return [
      {
        name: "fake",
        check: async () => {
          this.probes++;
          return this.config.token === "fake-good-token"
            ? { ok: true, detail: "bot @fakebot" }
            : { ok: false, refused: true, detail: "the token was refused; set FAKE_TOKEN" };
        },
      },
    ];
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.headers["x-fake-token"] !== this.config.token || !this.handlers) {
      res.writeHead(401).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id: string;
      user: string;
      text: string;
    };
    const threadKey = `fake:${body.user}`;
    await this.handlers.onMessage({
      platform: FAKE,
      threadKey,
      eventId: `fake:${body.id}`,
      messageId: `${threadKey}:${body.id}`,
      channelId: body.user,
      user: { id: body.user, isBot: false },
      text: body.text,
      attachments: [],
      mentioned: true,
      isDirect: true,
      timestamp: Date.now(),
    });
    res.writeHead(200).end("ok");
  }

  async post(threadKey: string, text: string): Promise<MessageRef> {
    const list = this.posted.get(threadKey) ?? [];
    list.push(text);
    this.posted.set(threadKey, list);
    const ref = `${threadKey}:bot${++this.seq}`;
    this.where.set(ref, { threadKey, index: list.length - 1 });
    return ref;
  }
  async edit(ref: MessageRef, text: string): Promise<void> {
    const at = this.where.get(ref);
    const list = at && this.posted.get(at.threadKey);
    if (at && list) list[at.index] = text;
  }
  async delete(): Promise<void> {}
  async react(): Promise<void> {}
  async unreact(): Promise<void> {}
  async typing(): Promise<void> {}
  channelOf(threadKey: string): string {
    return threadKey;
  }
}
