import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    // Upper bounds only, sized for a loaded 2-core machine (load average 15 was seen with several
    // test runs at once): starting product processes there takes seconds each.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Tests own their Redis key prefixes, so files run in parallel against one server.
    pool: "forks",
  },
});
