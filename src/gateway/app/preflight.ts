/**
 * What `start` refuses before it connects to anything, found by the one function that `start`
 * (`createGateway`) and `switchboard check` both call, so the two agree: a role that needs Redis
 * without one, a data or workspace directory that cannot be created, an HTTP port that cannot be
 * listened on (another process holds it, it needs privileges, the host is not this machine's), and
 * extension modules that cannot be loaded. Each problem is a `ConfigIssue` naming its field, so both
 * print it with the field's line in the file and exit 2. What needs the loaded extensions (model ids,
 * tool names) is checked after them, the same way (`modelIssues`, `toolIssues`).
 *
 * One difference, asked for by `check`: a port held by a running Switchboard (checked while it runs,
 * before a restart) is left to `portHeldBySwitchboard`, which check shows as a warning; start
 * refuses it like any port in use.
 */
import { accessSync, constants, statSync } from "node:fs";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { errorMessage } from "../../agent/errors.js";
import { importExtensionModule } from "../../extensions/loader.js";
import type { Role } from "../cli/types.js";
import { type ConfigIssue, joinPath } from "../config/errors.js";
import { redisTargetOf } from "../config/redis-target.js";
import type { HttpConfig, SwitchboardConfig } from "../config/types.js";

/**
 * Every problem of `config` that stops a process of `role` from starting here (see the header).
 * `runningSwitchboard: "leave"` (check) leaves out a port that a running Switchboard holds.
 */
export async function preflightIssues(
  config: SwitchboardConfig,
  role: Role,
  options: { runningSwitchboard?: "refuse" | "leave" } = {},
): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const redis = redisTargetOf(config.runtime) !== undefined;
  if (role !== "all" && !redis) {
    issues.push({
      path: "runtime.redisUrl",
      message:
        `is required by role ${role} (--role or SWITCHBOARD_ROLE), so that gateways and workers share work: ` +
        "set REDIS_URL (or runtime.redisUrl; REDIS_CLUSTER or runtime.redisCluster for a Redis Cluster), " +
        "or run role all, which works in one process without Redis",
    });
  }
  // Without Redis the sessions and the web chat's conversations are files under dataDir.
  if (!redis) issues.push(...directoryIssues("runtime.dataDir", config.runtime.dataDir));
  // Tools run where agents run: not in a gateway-only process.
  if (role !== "gateway") issues.push(...directoryIssues("agent.workspaceDir", config.agent.workspaceDir));
  const listen = await listenIssues(config.http);
  if (!(options.runningSwitchboard === "leave" && listen.heldBySwitchboard)) issues.push(...listen.issues);
  for (const [i, spec] of config.extensions.modules.entries()) {
    const imported = await importExtensionModule(spec);
    if ("problem" in imported)
      issues.push({
        path: joinPath(["extensions", "modules", i]),
        message: `cannot be loaded: ${imported.problem}`,
      });
  }
  return issues;
}

/**
 * Why `dir` cannot be used as a directory this process writes in (it is a file, or it is missing
 * and its nearest existing parent is a file or not writable), as issues of `field`. Creates nothing.
 */
function directoryIssues(field: string, dir: string): ConfigIssue[] {
  let at = dir;
  for (;;) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const parent = dirname(at);
      if ((code === "ENOENT" || code === "ENOTDIR") && parent !== at) {
        at = parent;
        continue;
      }
      return [{ path: field, message: `${dir} cannot be used (${code ?? errorMessage(err)})` }];
    }
    const what = at === dir ? dir : `${dir} cannot be created: ${at}`;
    if (!isDirectory)
      return [{ path: field, message: `${what} is a file, not a directory; choose another directory` }];
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
    } catch {
      return [
        {
          path: field,
          message: `${what} is not writable by this process (user id ${process.getuid?.() ?? "?"}); change its owner or choose another directory`,
        },
      ];
    }
    return [];
  }
}

/**
 * The warning `check` shows when the configured port is held by a running Switchboard (probably
 * this config's, checked before a restart): start refuses it until that one stops. Undefined
 * otherwise.
 */
export async function portHeldBySwitchboard(http: HttpConfig): Promise<string | undefined> {
  const listen = await listenIssues(http);
  return listen.heldBySwitchboard
    ? `http.port: ${http.port} on ${http.host} is in use by a running Switchboard; start refuses it until that one stops`
    : undefined;
}

/**
 * Why the HTTP server cannot listen where the config says (nothing for port 0: any free port), and
 * whether what holds the port answers as a Switchboard.
 */
async function listenIssues(
  http: HttpConfig,
): Promise<{ issues: ConfigIssue[]; heldBySwitchboard: boolean }> {
  const none = { issues: [], heldBySwitchboard: false };
  if (http.port === 0) return none;
  const code = await tryListen(http.host, http.port);
  if (code === undefined) return none;
  const one = (path: string, message: string, heldBySwitchboard = false) => ({
    issues: [{ path, message }],
    heldBySwitchboard,
  });
  if (code === "EADDRINUSE") {
    const switchboard = await answersAsSwitchboard(http.host, http.port);
    return one(
      "http.port",
      `${http.port} on ${http.host} is in use by ${switchboard ? "a running Switchboard" : "another process"}; ` +
        "stop it, or choose another port (--port, PORT or http.port)",
      switchboard,
    );
  }
  if (code === "EACCES")
    return one(
      "http.port",
      `${http.port} needs privileges this process lacks (ports below 1024 do); choose a port from 1024 up`,
    );
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN")
    return one(
      "http.host",
      `"${http.host}" is not an address of this machine (${code}); use 127.0.0.1, 0.0.0.0 or one of its addresses`,
    );
  return one("http.port", `cannot listen on ${http.host}:${http.port} (${code})`);
}

/** Listens on `host:port` and closes at once; resolves with the error code, or undefined when it could. */
function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Whether what listens on `host:port` answers `/healthz` as Switchboard does. */
async function answersAsSwitchboard(host: string, port: number): Promise<boolean> {
  // A wildcard bind answers on loopback.
  const name =
    host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host;
  // A timer that holds the process open (AbortSignal.timeout's does not): a connection the other
  // side resets can leave undici with nothing else pending, and the command would end mid-check.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 1000);
  try {
    const res = await fetch(`http://${name}:${port}/healthz`, { signal: abort.signal });
    const body = (await res.json()) as { ok?: unknown };
    return res.ok && body.ok === true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
