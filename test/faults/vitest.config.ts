/**
 * The fault suite (`npm run test:faults`): scripted failure scenarios that print their counts and
 * assert nothing is lost or duplicated. Files are `*.fault.ts` so the normal `npm test` run does not
 * pick them up. Uses the same Redis global setup as the unit tests (REDIS_URL or a throwaway
 * server); scenarios that restart Redis start their own server.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["test/faults/**/*.fault.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 90_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Scenarios spawn processes and load the CPU; two at a time on a 2-core machine.
    maxWorkers: 2,
  },
});
