/** The runner contract, run against the bubblewrap sandbox and the direct runner. */
import { createDirectRunner, DEFAULT_LIMITS } from "../../src/extensions/tools/index.js";
import { bwrapRunner, bwrapUnavailable } from "../support/sandbox.js";
import { commandRunnerContract } from "./command-runner-contract.js";

// Skipped only where bubblewrap truly cannot create its namespaces (the reason is printed).
const unavailable = await bwrapUnavailable();

commandRunnerContract({
  name: "bubblewrap",
  unavailable,
  limitsProcesses: true,
  create: (o) => bwrapRunner(o),
});

commandRunnerContract({
  name: "direct (no sandbox)",
  unavailable: undefined,
  // Outside a sandbox RLIMIT_NPROC would count every process of the gateway's user.
  limitsProcesses: false,
  create: async (o) =>
    createDirectRunner({
      ...(o.limits ? { limits: { ...DEFAULT_LIMITS, ...o.limits } } : {}),
      ...(o.envNames ? { envNames: o.envNames } : {}),
      ...(o.source ? { source: o.source } : {}),
    }),
});
