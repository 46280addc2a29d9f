/**
 * The embedded runtime (in-process inbox and leases, JSONL file store) against the runtime
 * contract, on a test clock.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedRuntime } from "../../src/queue/embedded/embedded-runtime.js";
import { RecordingSinks } from "../../src/queue/recording-sink.js";
import { ManualClock } from "../support/manual-clock.js";
import { runtimeContract } from "./runtime-contract.js";
import { type HarnessFactory, resolveTestModel, scriptedFactory } from "./support/harness.js";
import { LeaseLog } from "./support/lease-log.js";

const makeEmbedded: HarnessFactory = async (o) => {
  const dir = mkdtempSync(join(tmpdir(), "sb-embedded-"));
  const sinks = new RecordingSinks();
  const clock = new ManualClock();
  const leases = new LeaseLog();
  const runtime = new EmbeddedRuntime({
    dataDir: dir,
    sinks: sinks.factory,
    agentFactory: scriptedFactory(o.stream, o.tools),
    resolveModel: resolveTestModel,
    concurrency: o.concurrency,
    inboxCap: o.inboxCap,
    collectDebounceMs: o.collectDebounceMs ?? 400,
    defaultMode: o.defaultMode,
    compaction: o.compaction,
    leaseTtlMs: 60_000,
    controlPollMs: 200,
    clock,
    onLease: leases.record,
  });
  await runtime.start();
  return {
    runtime,
    store: runtime.store,
    sinks,
    clock,
    leases,
    close: async () => {
      await runtime.stop({ graceMs: 1000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

runtimeContract("embedded", makeEmbedded);
