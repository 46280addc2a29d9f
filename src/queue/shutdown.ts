/**
 * Graceful shutdown on SIGTERM/SIGINT for a process that runs a runtime: stop taking threads, let
 * running turns reach a checkpoint within the grace period, hand the rest over, close connections,
 * exit. A second signal exits at once.
 */
import { errorMessage } from "../agent/errors.js";

export interface Stoppable {
  stop(options?: { graceMs?: number }): Promise<void>;
}

export interface ShutdownOptions {
  /** How long running turns get to reach a checkpoint. Default 30 s. */
  graceMs?: number;
  /** Default `["SIGTERM", "SIGINT"]`. */
  signals?: NodeJS.Signals[];
  /** Runs after every target stopped (close other resources here). */
  afterStop?: () => Promise<void> | void;
  /** Default `process.exit`; tests replace it. */
  exit?: (code: number) => void;
  /** Where progress and failures are reported. Default: stderr. */
  log?: (line: string) => void;
  /** The process to listen on; default `process`. */
  target?: Pick<NodeJS.Process, "once" | "removeListener">;
}

/**
 * Installs the signal handlers and returns a function that removes them. The first signal stops
 * every target (in parallel) and exits with 0, or 1 when a stop failed; a second signal exits with
 * 130 without waiting.
 *
 * ```ts
 * const runtime = new RedisRuntime({ ... });
 * await runtime.start();
 * installShutdownHandlers([runtime], { afterStop: () => redis.quit() });
 * ```
 */
export function installShutdownHandlers(targets: Stoppable[], options: ShutdownOptions = {}): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const proc = options.target ?? process;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: exiting without waiting.`);
      exit(130);
      return;
    }
    stopping = true;
    const graceMs = options.graceMs ?? 30_000;
    log(`${signal}: handing threads over (grace ${graceMs} ms).`);
    void Promise.allSettled(targets.map((t) => t.stop({ graceMs })))
      .then(async (results) => {
        const failed = results.filter((r) => r.status === "rejected");
        for (const f of failed) log(`Stopping failed: ${String((f as PromiseRejectedResult).reason)}`);
        await options.afterStop?.();
        exit(failed.length > 0 ? 1 : 0);
      })
      .catch((e: unknown) => {
        log(`Shutdown failed: ${errorMessage(e)}`);
        exit(1);
      });
    // Listen again, so that a second signal forces the exit.
    proc.once(signal, onSignal);
  };
  for (const s of signals) proc.once(s, onSignal);
  return () => {
    for (const s of signals) proc.removeListener(s, onSignal);
  };
}
