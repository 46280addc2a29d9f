/**
 * One Discord gateway shard: a discord.js `Client` logged in for shard `id` of `count`. With a
 * `ConnectionLease` the shard connects only while this process holds the lease, and disconnects
 * when the lease is lost, so several gateway processes never receive the same events twice; the
 * standby process connects within the lease's TTL after the holder dies. discord.js reconnects and
 * resumes by itself while the lease is held.
 */

import { Client, type ClientOptions, Events } from "discord.js";
import { errorMessage } from "../../agent/errors.js";
import type { StructuredLogger } from "../../agent/logger.js";
import type { ConnectionLease, ConnectionStatus } from "../types.js";
import { guardPacketHandling } from "./packet-guard.js";

export interface ShardOptions {
  id: number;
  count: number;
  token: string;
  clientOptions: ClientOptions;
  lease?: ConnectionLease;
  log: StructuredLogger;
  /** Wire the client's event listeners (called for every new client). */
  attach: (client: Client, shardId: number) => void;
  onState: (state: ConnectionStatus["state"], detail?: string) => void;
  /** How long to wait for READY after login (default 30 s). */
  readyTimeoutMs?: number;
}

export class ShardConnection {
  private client: Client | undefined;
  private readonly stopper = new AbortController();
  private holding: Promise<void> | undefined;

  constructor(private readonly o: ShardOptions) {}

  get name(): string {
    return `discord:shard:${this.o.id}`;
  }

  /** Without a lease: connect and resolve once READY (or reject). With one: resolve at once. */
  async start(): Promise<void> {
    const lease = this.o.lease;
    if (!lease) {
      await this.connect();
      return;
    }
    this.o.onState("standby", "waiting for the shard's connection lease");
    this.holding = lease.hold(
      async (lost) => {
        await this.connect();
        const done = AbortSignal.any([lost, this.stopper.signal]);
        await new Promise<void>((resolve) => {
          if (done.aborted) resolve();
          else done.addEventListener("abort", () => resolve(), { once: true });
        });
        await this.disconnect(lost.aborted ? "lease lost to another gateway process" : undefined);
      },
      {
        signal: this.stopper.signal,
        onState: (s) => {
          if (s === "standby") this.o.onState("standby", "another gateway process holds this shard");
        },
      },
    );
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.holding;
    await this.disconnect();
    this.o.onState("stopped");
  }

  private async connect(): Promise<void> {
    this.o.onState("connecting");
    const client = new Client({ ...this.o.clientOptions, shards: [this.o.id], shardCount: this.o.count });
    this.client = client;
    guardPacketHandling(client, this.o.id, this.o.log);
    this.o.attach(client, this.o.id);
    client.on(Events.ShardDisconnect, () => this.o.onState("connecting", "disconnected; reconnecting"));
    client.on(Events.ShardReconnecting, () => this.o.onState("connecting", "reconnecting"));
    client.on(Events.ShardResume, () => this.o.onState("connected"));
    client.on(Events.ShardReady, () => this.o.onState("connected"));
    client.on(Events.Error, (err) => this.o.log.error({ shard: this.o.id, err }, "discord: client error"));
    client.on(Events.ShardError, (err, shard) =>
      this.o.log.error({ shard, err }, "discord: shard connection error"),
    );
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Discord shard ${this.o.id}: no READY within the timeout`)),
        this.o.readyTimeoutMs ?? 30_000,
      );
      client.once(Events.ClientReady, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    try {
      await client.login(this.o.token);
      await ready;
      this.o.onState("connected");
      this.o.log.info({ shard: this.o.id, count: this.o.count }, "discord: shard connected");
    } catch (err) {
      const message = errorMessage(err);
      this.o.onState("failed", message);
      await this.disconnect();
      throw new Error(
        `Discord shard ${this.o.id} could not connect: ${message} (check the bot token and intents)`,
      );
    }
  }

  private async disconnect(reason?: string): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    if (reason) this.o.log.warn({ shard: this.o.id }, `discord: disconnecting: ${reason}`);
    try {
      await client.destroy();
    } catch (err) {
      this.o.log.warn({ err }, "discord: error while disconnecting");
    }
    if (reason && !this.stopper.signal.aborted) this.o.onState("standby", reason);
  }
}
