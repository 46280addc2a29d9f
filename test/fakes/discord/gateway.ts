/**
 * The fake Discord gateway (JSON encoding, no compression): HELLO, IDENTIFY → READY + GUILD_CREATE,
 * heartbeat ACKs, RESUME answered with INVALID_SESSION (the client identifies again), and
 * dispatches filtered by each session's shard and intents, as Discord filters them. Several sessions
 * for one shard all receive its events (which is why gateway processes hold a lease per shard).
 */
import type { WebSocket, WebSocketServer } from "ws";
import { APPLICATION_ID, type DiscordWorld, GUILD_ID } from "./world.js";

type Json = Record<string, unknown>;

const Intents = {
  Guilds: 1 << 0,
  GuildMessages: 1 << 9,
  GuildMessageReactions: 1 << 10,
  DirectMessages: 1 << 12,
  DirectMessageReactions: 1 << 13,
  MessageContent: 1 << 15,
} as const;

export interface GatewaySession {
  ws: WebSocket;
  sessionId: string;
  identified: boolean;
  shard: [number, number];
  intents: number;
  seq: number;
  /** Dispatch names sent, in order. */
  sent: string[];
  /** The last dispatch sent, for replaying it as a resumed session would. */
  lastDispatch?: Json;
}

/** Which intent a dispatch needs, given whether it concerns a guild. */
function intentFor(t: string, inGuild: boolean): number {
  switch (t) {
    case "MESSAGE_CREATE":
    case "MESSAGE_UPDATE":
    case "MESSAGE_DELETE":
      return inGuild ? Intents.GuildMessages : Intents.DirectMessages;
    case "MESSAGE_REACTION_ADD":
    case "MESSAGE_REACTION_REMOVE":
      return inGuild ? Intents.GuildMessageReactions : Intents.DirectMessageReactions;
    case "GUILD_CREATE":
    case "THREAD_CREATE":
    case "THREAD_UPDATE":
    case "CHANNEL_CREATE":
      return Intents.Guilds;
    default:
      return 0;
  }
}

export class FakeGateway {
  readonly sessions = new Set<GatewaySession>();
  /** Number of IDENTIFY payloads received, per shard id. */
  readonly identifies = new Map<number, number>();
  heartbeatIntervalMs = 41_250;
  url = "";
  private n = 0;

  constructor(
    private readonly world: DiscordWorld,
    private readonly token: string,
    private readonly guildPayload: () => Json,
  ) {}

  attach(wss: WebSocketServer): void {
    wss.on("connection", (ws) => this.onConnection(ws));
  }

  /** Identified sessions, optionally only those of one shard. */
  live(shard?: number): GatewaySession[] {
    return [...this.sessions].filter((s) => s.identified && (shard === undefined || s.shard[0] === shard));
  }

  /**
   * Send a dispatch to every session that should get it: the guild's shard (DMs go to shard 0),
   * with the intent it needs. Message content is blanked without MESSAGE_CONTENT unless the bot is
   * mentioned or it is a DM, as Discord does.
   */
  dispatch(t: string, d: Json, guildId?: string): number {
    let count = 0;
    for (const s of this.live()) {
      const [id, total] = s.shard;
      const shardOf = guildId ? Number((BigInt(guildId) >> 22n) % BigInt(total)) : 0;
      if (shardOf !== id) continue;
      const need = intentFor(t, guildId !== undefined);
      if (need && (s.intents & need) === 0) continue;
      let data = d;
      if (t === "MESSAGE_CREATE" && guildId && (s.intents & Intents.MessageContent) === 0) {
        const mentioned =
          Array.isArray(d.mentions) && d.mentions.some((u) => (u as Json).id === this.world.bot.id);
        if (!mentioned) data = { ...d, content: "", embeds: [], attachments: [] };
      }
      this.send(s, { op: 0, t, s: ++s.seq, d: data });
      count++;
    }
    return count;
  }

  /** Send every session its last dispatch again, with the same sequence number (a resume replay). */
  replayLast(): void {
    for (const s of this.live()) if (s.lastDispatch) s.ws.send(JSON.stringify(s.lastDispatch));
  }

  private send(s: GatewaySession, payload: Json): void {
    if (payload.op === 0) {
      s.sent.push(String(payload.t));
      s.lastDispatch = payload;
    }
    s.ws.send(JSON.stringify(payload));
  }

  private onConnection(ws: WebSocket): void {
    const session: GatewaySession = {
      ws,
      sessionId: `session-${++this.n}`,
      identified: false,
      shard: [0, 1],
      intents: 0,
      seq: 0,
      sent: [],
    };
    this.sessions.add(session);
    ws.on("close", () => this.sessions.delete(session));
    ws.on("message", (raw) => {
      let msg: Json;
      try {
        msg = JSON.parse(String(raw)) as Json;
      } catch {
        ws.close(4002, "Decode error");
        return;
      }
      this.onPayload(session, msg);
    });
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs } }));
  }

  private onPayload(s: GatewaySession, msg: Json): void {
    const d = (msg.d ?? {}) as Json;
    switch (msg.op) {
      case 1:
        s.ws.send(JSON.stringify({ op: 11 }));
        return;
      case 2: {
        if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
          s.ws.close(4004, "Authentication failed.");
          return;
        }
        const shard = Array.isArray(d.shard) ? (d.shard as [number, number]) : [0, 1];
        s.shard = [Number(shard[0]), Number(shard[1])];
        s.intents = Number(d.intents ?? 0);
        s.identified = true;
        this.identifies.set(s.shard[0], (this.identifies.get(s.shard[0]) ?? 0) + 1);
        const ours = Number((BigInt(GUILD_ID) >> 22n) % BigInt(s.shard[1])) === s.shard[0];
        this.send(s, {
          op: 0,
          t: "READY",
          s: ++s.seq,
          d: {
            v: 10,
            user: this.world.userWire(this.world.bot),
            guilds: ours ? [{ id: GUILD_ID, unavailable: true }] : [],
            session_id: s.sessionId,
            resume_gateway_url: this.url,
            shard: s.shard,
            application: { id: APPLICATION_ID, flags: 0 },
            private_channels: [],
            relationships: [],
            user_settings: {},
            presences: [],
            guild_join_requests: [],
            geo_ordered_rtc_regions: [],
          },
        });
        if (ours && (s.intents & Intents.Guilds) !== 0)
          this.send(s, { op: 0, t: "GUILD_CREATE", s: ++s.seq, d: this.guildPayload() });
        return;
      }
      case 6:
        // No replay buffer here: tell the client to identify afresh.
        s.ws.send(JSON.stringify({ op: 9, d: false }));
        return;
      default:
        return;
    }
  }
}
