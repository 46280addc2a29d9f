import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests own their Redis key prefixes, so files run in parallel against one server.
    pool: "forks",
  },
});
