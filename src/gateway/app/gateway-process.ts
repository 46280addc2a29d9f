/**
 * A built Switchboard process: what `createGateway` returns. `start` starts the role's parts (the
 * runtime's workers, the HTTP server, the adapters' inbound side) and tells the person who started
 * it where to go; `stop` drains them, inbound first, then running turns within the grace period.
 */

import type { ChannelAdapter, Platform } from "../../adapters/types.js";
import { START_LINK_TTL_MS, type WebChatAdapter } from "../../adapters/web/index.js";
import type { ApprovalStore } from "../../extensions/approval/types.js";
import type { ExtensionRunner } from "../../extensions/runner.js";
import type { SandboxStatus } from "../../extensions/tools/index.js";
import type { SessionStore } from "../../queue/store/types.js";
import type { Runtime } from "../../queue/types.js";
import type { Role } from "../cli/types.js";
import type { SwitchboardConfig } from "../config/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";
import type { GatewayHttpServer, ListeningAddress } from "../http/server.js";
import type { Logger } from "../log.js";
import type { InboundPipeline } from "./inbound.js";
import { adapterProbe } from "./probes.js";
import type { ScheduleWiring } from "./schedules.js";
import type { SharedRedis } from "./shared-redis.js";

/** A built process. Fields are exposed for tests and for the CLI's messages. */
export interface Gateway {
  readonly role: Role;
  readonly runtime: Runtime;
  readonly store: SessionStore;
  readonly runner: ExtensionRunner;
  /** Enabled adapters (instrumented) by platform. */
  readonly adapters: ReadonlyMap<Platform, ChannelAdapter>;
  readonly web: WebChatAdapter | undefined;
  readonly http: GatewayHttpServer;
  readonly metrics: SwitchboardMetrics;
  /** The HTTP server's address once started. */
  readonly url: string | undefined;
  /** The web chat's address once started (when the web chat runs in this process). */
  readonly webUrl: string | undefined;
  start(): Promise<void>;
  /** Drains and closes everything. Safe to call more than once. */
  stop(): Promise<void>;
}

/** The parts a process starts and stops: what a `Gateway` exposes of them, and the rest. */
export interface GatewayParts
  extends Pick<Gateway, "role" | "runtime" | "store" | "runner" | "adapters" | "web" | "http" | "metrics"> {
  config: SwitchboardConfig;
  pipeline: InboundPipeline;
  sandbox: SandboxStatus | undefined;
  shared: SharedRedis | undefined;
  approvals: ApprovalStore;
  /** Scheduled prompts: fired where workers run, stopped before the runtime. */
  schedules: Pick<ScheduleWiring, "start" | "stop">;
  /** Closed last when the process stops, in this order. */
  closers: readonly (() => Promise<unknown>)[];
  logger: Logger;
  /** Lines for the person who started the process (the web chat's address). */
  announce: ((line: string) => void) | undefined;
}

/** The `Gateway` of built `parts`. */
export function gatewayOf(parts: GatewayParts): Gateway {
  const lifecycle = new GatewayLifecycle(parts);
  return {
    ...parts,
    get url() {
      return lifecycle.url;
    },
    get webUrl() {
      return lifecycle.webUrl;
    },
    start: () => lifecycle.start(),
    stop: () => lifecycle.stop(),
  };
}

/** Starting and stopping a process's parts, and the addresses it learns on the way. */
class GatewayLifecycle {
  private address: string | undefined;
  private webAddress: string | undefined;
  private stopping: Promise<void> | undefined;
  /** The adapters whose inbound side this process runs (none in a worker). */
  private readonly inbound: ChannelAdapter[];

  constructor(private readonly parts: GatewayParts) {
    this.inbound = parts.role !== "worker" ? [...parts.adapters.values()] : [];
  }

  get url(): string | undefined {
    return this.address;
  }

  get webUrl(): string | undefined {
    return this.webAddress;
  }

  async start(): Promise<void> {
    const { role, http, logger } = this.parts;
    if (role !== "gateway") {
      await this.parts.runtime.start();
      await this.parts.schedules.start();
    }
    const address = await http.listen();
    const url = address.url;
    this.address = url;
    await this.startInbound();
    logger.info({ role, url, channels: [...this.parts.adapters.keys()] }, "switchboard started");
    const announce = this.parts.announce;
    // The address for people (with --port 0 it is only known now); /healthz answers there.
    announce?.(`Listening on ${url} (role ${role})`);
    const sandbox = this.parts.sandbox;
    if (sandbox && !sandbox.sandboxed) announce?.(`Tools: ${sandbox.summary}.`);
    if (role === "worker") return;
    await this.announceWebChat(address);
  }

  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  /** Starts each inbound adapter with its handlers; one that fails is logged and left to /readyz. */
  private async startInbound(): Promise<void> {
    const { http, logger, pipeline } = this.parts;
    for (const adapter of this.inbound) http.addProbe(adapterProbe(adapter));
    const specs = this.parts.runner.commandSpecs();
    for (const adapter of this.inbound) {
      try {
        await adapter.start(pipeline.handlersFor(adapter));
      } catch (err) {
        logger.error({ platform: adapter.platform, err }, "channel failed to start; /readyz reports it");
        continue;
      }
      if (adapter.registerCommands) {
        await adapter
          .registerCommands(specs)
          .catch((err: unknown) =>
            logger.warn({ platform: adapter.platform, err }, "could not register commands"),
          );
      }
    }
  }

  /** The web chat's address, and its one-time sign-in link for the person who started the process. */
  private async announceWebChat(address: ListeningAddress): Promise<void> {
    const { config, announce, web } = this.parts;
    if (!web) {
      if (config.channels.web.enabled) announce?.("The web chat is not available in this build.");
      return;
    }
    const base = (config.http.publicUrl ?? reachable(address)).replace(/\/+$/, "");
    const webUrl = `${base}${config.channels.web.path === "/" ? "/" : config.channels.web.path}`;
    this.webAddress = webUrl;
    // The one-time link goes to the person who started the process, never into the log.
    if (announce) {
      const link = await web.signInLink(webUrl, START_LINK_TTL_MS);
      announce(`Web chat: ${link}`);
      announce(
        "  (the link signs one browser in, once; a signed-in page makes more under “Sign in elsewhere”)",
      );
    }
  }

  private async drain(): Promise<void> {
    const { http, logger, config } = this.parts;
    const redis = this.parts.shared?.redis;
    http.setDraining();
    // Without Redis nothing can be handed over, and commands would wait for it forever.
    if (redis && redis.status !== "ready") redis.disconnect();
    await Promise.allSettled(this.inbound.map((a) => a.stop()));
    await this.parts.schedules
      .stop()
      .catch((err: unknown) => logger.error({ err }, "schedules did not stop cleanly"));
    await this.parts.runtime
      .stop({ graceMs: config.runtime.shutdownGraceMs })
      .catch((err: unknown) => logger.error({ err }, "runtime did not stop cleanly"));
    await http.close().catch(() => {});
    await this.parts.approvals.close().catch(() => {});
    for (const close of this.parts.closers) await close().catch(() => {});
    if (redis?.status === "ready") await redis.quit().catch(() => redis.disconnect());
    else redis?.disconnect();
    logger.info("switchboard stopped");
  }
}

/** The server's URL as a browser on this machine reaches it (a wildcard bind answers on loopback). */
function reachable(address: ListeningAddress): string {
  if (address.host === "0.0.0.0") return `http://127.0.0.1:${address.port}`;
  if (address.host === "::") return `http://[::1]:${address.port}`;
  return address.url;
}
