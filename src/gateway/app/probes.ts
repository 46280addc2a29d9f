/**
 * Readiness of a process: each enabled channel's inbound connections (for `/readyz`). The
 * credential checks of `switchboard check` are the adapters' own (`ChannelAdapter.probe`).
 */
import type { ChannelAdapter } from "../../adapters/types.js";
import type { ProbeResult, ReadinessProbe } from "../http/readiness.js";

/** Ready when every connection of `adapter` is up (a `standby` one: another gateway holds it). */
export function adapterProbe(adapter: ChannelAdapter): ReadinessProbe {
  return {
    name: adapter.platform,
    async check(): Promise<ProbeResult> {
      const connections = adapter.connections();
      if (connections.length === 0) return { ok: false, detail: "not started" };
      const bad = connections.filter((c) => !["connected", "standby", "idle"].includes(c.state));
      const detail = connections
        .map((c) => `${c.name}: ${c.state}${c.detail ? ` (${c.detail})` : ""}`)
        .join(", ");
      return { ok: bad.length === 0, detail };
    },
  };
}
