/**
 * `switchboard health`: asks the Switchboard that runs with this config for `/healthz`, at the
 * address `start` listens on (so a container health check follows the configured port and `PORT`).
 */
import { errorMessage } from "../../agent/errors.js";
import type { SwitchboardConfig } from "../config/types.js";
import { type CliIO, EXIT } from "./types.js";

/** The address to reach a server bound to `host`: a wildcard bind is asked over loopback. */
function reachableHost(host: string): string {
  const h = host.trim().replace(/^\[|\]$/g, "");
  if (h === "0.0.0.0" || h === "") return "127.0.0.1";
  if (h === "::") return "[::1]";
  return h.includes(":") ? `[${h}]` : h;
}

/** 0 when /healthz answers 2xx within `timeoutMs`, else 1 (2 when the config names no fixed port). */
export async function checkHealth(config: SwitchboardConfig, io: CliIO, timeoutMs = 4000): Promise<number> {
  const { host, port } = config.http;
  if (port === 0) {
    io.stderr(
      "switchboard health: http.port is 0 (any free port), so there is no fixed address to ask; " +
        "set http.port, PORT or --port.\n",
    );
    return EXIT.usage;
  }
  const url = `http://${reachableHost(host)}:${port}/healthz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (res.ok) {
      io.stdout(`healthy: ${url} answered ${res.status}\n`);
      return EXIT.ok;
    }
    io.stderr(`not healthy: ${url} answered ${res.status}\n`);
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const why = cause ?? errorMessage(err);
    io.stderr(`not healthy: nothing answered at ${url} (${why}); is Switchboard running with this config?\n`);
  }
  return EXIT.failure;
}
