/**
 * The bubblewrap sandbox for tests: whether it can run on this machine (probed once per test file),
 * and a runner with the limits a test asks for. Tests that need it skip, saying why, only when the
 * probe fails (no bwrap, or a kernel or container that forbids its namespaces); `.ci/run` installs
 * bubblewrap so that CI runs them.
 */
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import {
  bwrapFeatures,
  type CommandRunner,
  compileSeccompFilter,
  createBwrapRunner,
  DEFAULT_LIMITS,
  findExecutable,
  probeSandbox,
  type SandboxLimits,
  type SandboxNetwork,
  type SandboxStatus,
} from "../../src/extensions/tools/index.js";

let probed: Promise<SandboxStatus> | undefined;
const opened: CommandRunner[] = [];
// Runners keep a copy of /etc (under /dev/shm): remove them after the test file that made them.
afterAll(() => {
  for (const r of opened.splice(0)) r.close?.();
  probed = undefined;
});

/** The sandbox as `auto` finds it here (probed once per test file, in a temporary root). */
function bwrapStatus(): Promise<SandboxStatus> {
  if (!probed) {
    const root = mkdtempSync(join(tmpdir(), "sb-probe-"));
    // Reachable for nobody, as a workspace root normally is (mkdtemp makes it private).
    chmodSync(root, 0o755);
    probed = probeSandbox({
      sandbox: { mode: "auto", network: "none", env: [], readOnlyPaths: [], limits: DEFAULT_LIMITS },
      workspaceRoot: root,
    }).then((status) => {
      opened.push(status.runner);
      return status;
    });
  }
  return probed;
}

/** Why sandbox tests cannot run here, or undefined when they can. */
export async function bwrapUnavailable(): Promise<string | undefined> {
  const status = await bwrapStatus();
  return status.sandboxed ? undefined : `bubblewrap cannot run here: ${status.reason}`;
}

/** A bwrap runner as `auto` builds it here (as nobody under root), with these limits and options. */
export async function bwrapRunner(
  o: {
    limits?: Partial<SandboxLimits>;
    network?: SandboxNetwork;
    envNames?: string[];
    source?: NodeJS.ProcessEnv;
    readOnlyPaths?: string[];
  } = {},
): Promise<CommandRunner> {
  const bwrap = findExecutable("bwrap", process.env.PATH);
  if (!bwrap) throw new Error("bwrap is not installed");
  const identity = (await bwrapStatus()).identity;
  const runner = createBwrapRunner({
    bwrap,
    network: o.network ?? "none",
    limits: { ...DEFAULT_LIMITS, ...o.limits },
    features: await bwrapFeatures(bwrap),
    seccomp: compileSeccompFilter(),
    ...(identity ? { identity } : {}),
    ...(o.envNames ? { envNames: o.envNames } : {}),
    ...(o.source ? { source: o.source } : {}),
    ...(o.readOnlyPaths ? { readOnlyPaths: o.readOnlyPaths } : {}),
  });
  opened.push(runner);
  return runner;
}
