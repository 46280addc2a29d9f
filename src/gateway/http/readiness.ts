/**
 * Readiness: small named checks (Redis answers PING, an adapter's connection is up) that `/readyz`
 * and `switchboard check` run together. The wiring code registers one probe per dependency; this
 * module knows none of them.
 */
import { errorText } from "../../agent/errors.js";
import { redactSecrets } from "../log.js";

/** Outcome of one check; `detail` is a short human text (`PONG in 2 ms`, `401 Unauthorized`). */
export interface ProbeResult {
  ok: boolean;
  detail?: string;
}

/**
 * One named dependency check. `check` should finish quickly (the runner gives it `timeoutMs`) and
 * may throw: a throw or timeout counts as not ready, with the error's first line as detail.
 */
export interface ReadinessProbe {
  name: string;
  check(): Promise<ProbeResult>;
}

export interface ProbeReport extends ProbeResult {
  name: string;
  ms: number;
}

export interface ReadinessReport {
  ok: boolean;
  probes: ProbeReport[];
}

/** Runs every probe at once, each bounded by `timeoutMs` (default 2000). Ready when all are ok. */
export async function runProbes(
  probes: readonly ReadinessProbe[],
  options: { timeoutMs?: number } = {},
): Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const reports = await Promise.all(
    probes.map(async (probe): Promise<ProbeReport> => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<ProbeResult>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, detail: `no answer within ${timeoutMs} ms` }),
          timeoutMs,
        );
      });
      let result: ProbeResult;
      try {
        result = await Promise.race([probe.check(), timeout]);
      } catch (err) {
        result = { ok: false, detail: redactSecrets(errorText(err)) };
      } finally {
        clearTimeout(timer);
      }
      const ms = Math.round(performance.now() - started);
      const report: ProbeReport = { name: probe.name, ok: result.ok === true, ms };
      if (result.detail !== undefined) report.detail = redactSecrets(result.detail);
      return report;
    }),
  );
  return { ok: reports.every((r) => r.ok), probes: reports };
}

/** A probe that PINGs Redis through any client with `ping()` (ioredis), so this module needs no driver. */
export function redisPingProbe(client: { ping(): Promise<string> }, name = "redis"): ReadinessProbe {
  return {
    name,
    async check() {
      const started = performance.now();
      const answer = await client.ping();
      const ms = Math.round(performance.now() - started);
      return { ok: answer === "PONG", detail: `${answer} in ${ms} ms` };
    },
  };
}
