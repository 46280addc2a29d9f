/**
 * The gateway's one HTTP server (Hono on Node): `/healthz`, `/readyz`, `/metrics`, and whatever the
 * wiring code adds (Slack Events API, Telegram webhook, the web chat page and its event stream).
 *
 * Routing: the routes added with `route`/`mountNode` and the built-in ones are matched first, by
 * method and exact path; only a request none of them takes goes to an app added with `mount` (the
 * longest matching prefix). So the web chat mounted at `/` never shadows a webhook or `/metrics`,
 * and each route keeps its own authentication.
 *
 * Access: bound to loopback by default. A non-loopback bind without a token is refused at
 * `listen()`. Without a token every request must name a loopback host (`127.0.0.1`, `localhost`,
 * `[::1]`, any port) or the host of `publicUrl`, so a page on another site cannot reach the server
 * by DNS rebinding. With a
 * token configured, every route but `/healthz`, `/readyz` and routes added `public: true` (endpoints
 * that authenticate themselves, such as signed Slack events, or the web chat's sign-in) requires it.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Handler, Hono } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { isLoopbackHost } from "../config/resolve.js";
import type { HttpConfig } from "../config/types.js";
import type { Logger } from "../log.js";
import { checkToken, isAuthorized } from "./auth.js";
import { hostRule } from "./host.js";
import { createMetrics, type SwitchboardMetrics } from "./metrics.js";
import { type ReadinessProbe, runProbes } from "./readiness.js";

/** Hono environment of every route: handlers can reach the Node request and response. */
export type GatewayEnv = { Bindings: HttpBindings };
export type GatewayApp = Hono<GatewayEnv>;
export type GatewayHandler = Handler<GatewayEnv>;
/** A plain Node handler (`(req, res) => void`), such as Telegram's webhook handler or Bolt's receiver. */
export type NodeRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";

export interface RouteOptions {
  /**
   * Reachable without the access token. Only for endpoints that authenticate requests themselves
   * (Slack's signing secret, Telegram's secret token header, the web chat's sign-in). Default false.
   */
  public?: boolean;
}

export interface ListeningAddress {
  host: string;
  port: number;
  /** `http://host:port` (IPv6 hosts in brackets). */
  url: string;
}

export interface HttpServerOptions {
  config: HttpConfig;
  logger: Logger;
  /** Served at `/metrics`; a fresh registry when absent. */
  metrics?: SwitchboardMetrics;
  probes?: readonly ReadinessProbe[];
  /** Per-probe limit of `/readyz` (default 2000 ms). */
  probeTimeoutMs?: number;
}

/**
 * The server. Routes may be added before or after `listen()`; a later route never shadows an
 * earlier one for the same method and path (first match wins, built-in routes first), and no mounted
 * app shadows a route.
 */
export interface GatewayHttpServer {
  /** Adds a Hono handler for `method` (or several) and `path` (Hono syntax: `/chat/:id`, `/assets/*`). */
  route(
    method: HttpMethod | readonly HttpMethod[],
    path: string,
    handler: GatewayHandler,
    options?: RouteOptions,
  ): void;
  /**
   * Serves `app` under `prefix` (`"/"` for the root) for the requests no route takes: the web chat as
   * its own Hono app. With several mounts the longest matching prefix wins.
   */
  mount(prefix: string, app: GatewayApp, options?: RouteOptions): void;
  /** Serves a plain Node handler at `method` + `path`; it owns the request body and the response. */
  mountNode(method: HttpMethod, path: string, handler: NodeRequestHandler, options?: RouteOptions): void;
  addProbe(probe: ReadinessProbe): void;
  /** From now on `/readyz` answers 503, so load balancers stop sending work (call at shutdown). */
  setDraining(): void;
  /** Binds `config.host:config.port`. Throws when binding off loopback without a token, or when the port is taken. */
  listen(): Promise<ListeningAddress>;
  /** The bound address once listening. */
  readonly address: ListeningAddress | undefined;
  /** Stops accepting and ends open connections (event streams included). */
  close(): Promise<void>;
}

/** Creates the server (not yet listening) with its health, readiness and metrics routes. */
export function createHttpServer(options: HttpServerOptions): GatewayHttpServer {
  const { config, logger } = options;
  const token = config.token || undefined;
  const hostAllowed = hostRule({ token, publicUrl: config.publicUrl });
  const metrics = options.metrics ?? createMetrics({ processMetrics: false });
  const probes: ReadinessProbe[] = [...(options.probes ?? [])];
  const publicRoutes = new TrieRouter<true>();
  /** Every method and path a route was added for: what is matched before the mounted apps. */
  const routed = new TrieRouter<true>();
  const core: GatewayApp = new Hono<GatewayEnv>({ router: new TrieRouter() });
  const mounts: Array<{ base: string; public: boolean; app: GatewayApp }> = [];
  const app: GatewayApp = new Hono<GatewayEnv>();
  const started = Date.now();
  let draining = false;
  let server: Server | undefined;
  let address: ListeningAddress | undefined;

  const matches = (router: TrieRouter<true>, method: string, path: string): boolean =>
    (router.match(method, path)[0] as unknown[]).length > 0 ||
    (method === "HEAD" && (router.match("GET", path)[0] as unknown[]).length > 0);
  const isPublic = (method: string, path: string): boolean => matches(publicRoutes, method, path);
  const mountFor = (path: string) =>
    mounts.find((m) => m.base === "" || path === m.base || path.startsWith(`${m.base}/`));

  app.use("*", async (c, next) => {
    const t0 = performance.now();
    await next();
    logger.debug(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(performance.now() - t0),
      },
      "http request",
    );
  });
  app.onError((err, c) => {
    logger.error({ err, method: c.req.method, path: c.req.path }, "http handler failed");
    return c.json({ error: "internal error" }, 500);
  });
  app.all("*", async (c) => {
    const { method, path } = c.req;
    if (!hostAllowed(c.req.header("host"))) {
      return c.json(
        {
          error: "forbidden",
          message:
            "This server has no access token, so it answers only requests addressed to 127.0.0.1, localhost, [::1] or the host of http.publicUrl. Set http.publicUrl (behind a tunnel or proxy) or http.token to serve another host name.",
        },
        403,
      );
    }
    if (matches(routed, method, path)) {
      if (token && !isPublic(method, path)) {
        const refused = checkToken(c, token);
        if (refused) return refused;
      }
      return core.fetch(c.req.raw, c.env);
    }
    const mount = mountFor(path);
    if (!mount) return c.json({ error: "not found" }, 404);
    if (token && !mount.public) {
      const refused = checkToken(c, token);
      if (refused) return refused;
    }
    return mount.app.fetch(c.req.raw, c.env);
  });
  core.onError((err, c) => {
    logger.error({ err, method: c.req.method, path: c.req.path }, "http handler failed");
    return c.json({ error: "internal error" }, 500);
  });
  core.notFound((c) => c.json({ error: "not found" }, 404));

  const markPublic = (method: string, path: string, opts: RouteOptions | undefined) => {
    if (opts?.public) publicRoutes.add(method, path, true);
  };

  const route: GatewayHttpServer["route"] = (method, path, handler, opts) => {
    const methods = typeof method === "string" ? [method] : [...method];
    for (const m of methods) {
      markPublic(m, path, opts);
      routed.add(m, path, true);
    }
    core.on(methods, path, handler);
  };

  route(
    "GET",
    "/healthz",
    (c) => c.json({ ok: true, uptimeSeconds: Math.round((Date.now() - started) / 1000) }),
    { public: true },
  );
  route(
    "GET",
    "/readyz",
    async (c) => {
      if (draining) return c.json({ ok: false, draining: true }, 503);
      const report = await runProbes(probes, { timeoutMs: options.probeTimeoutMs });
      // Callers without the token learn which dependency is down, not its details.
      const detailed = isAuthorized(c, token);
      const body = detailed
        ? report
        : { ok: report.ok, probes: report.probes.map(({ name, ok }) => ({ name, ok })) };
      return c.json(body, report.ok ? 200 : 503);
    },
    { public: true },
  );
  route("GET", "/metrics", async (c) => {
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { "content-type": contentType });
  });

  return {
    route,
    mount(prefix, sub, opts) {
      const base = prefix === "/" ? "" : prefix.replace(/\/+$/, "");
      // Wrapped at its prefix, so the app sees its mount point (Hono's `baseRoutePath`).
      const wrapped = new Hono<GatewayEnv>().route(base || "/", sub);
      mounts.push({ base, public: opts?.public === true, app: wrapped });
      mounts.sort((a, b) => b.base.length - a.base.length);
    },
    mountNode(method, path, handler, opts) {
      route(
        method,
        path,
        (c) =>
          new Promise<Response>((resolve) => {
            const { incoming, outgoing } = c.env;
            const done = () => resolve(RESPONSE_ALREADY_SENT);
            outgoing.once("finish", done);
            outgoing.once("close", done);
            try {
              handler(incoming, outgoing);
            } catch (err) {
              logger.error({ err, path }, "node handler threw");
              if (!outgoing.headersSent) outgoing.writeHead(500, { "content-type": "application/json" });
              outgoing.end('{"error":"internal error"}');
            }
          }),
        opts,
      );
    },
    addProbe(probe) {
      probes.push(probe);
    },
    setDraining() {
      draining = true;
    },
    get address() {
      return address;
    },
    async listen() {
      if (server) throw new Error("The HTTP server is already listening; call listen() once.");
      if (!isLoopbackHost(config.host) && !token) {
        throw new Error(
          `Refusing to bind ${config.host}:${config.port} without an access token: anyone on the network could ` +
            "use the agent. Set SWITCHBOARD_HTTP_TOKEN (http.token), or bind http.host 127.0.0.1.",
        );
      }
      const s = createAdaptorServer({ fetch: app.fetch, hostname: config.host }) as Server;
      await new Promise<void>((resolve, reject) => {
        s.once("error", (err: NodeJS.ErrnoException) =>
          reject(
            new Error(
              err.code === "EADDRINUSE"
                ? `Port ${config.port} on ${config.host} is in use; stop the other process or set http.port.`
                : `Cannot listen on ${config.host}:${config.port}: ${err.message}`,
            ),
          ),
        );
        s.listen(config.port, config.host, () => resolve());
      });
      server = s;
      const bound = s.address() as AddressInfo;
      const host = bound.address.includes(":") ? `[${bound.address}]` : bound.address;
      address = { host: bound.address, port: bound.port, url: `http://${host}:${bound.port}` };
      logger.info({ url: address.url, tokenRequired: Boolean(token) }, "http server listening");
      return address;
    },
    async close() {
      const s = server;
      if (!s) return;
      server = undefined;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
}
