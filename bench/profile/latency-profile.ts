/**
 * Profiles the end-to-end latency phase (Redis mode) and prints where this process spends its CPU,
 * grouped by package or source folder (self time). Run:
 *
 *   node --import tsx --cpu-prof --cpu-prof-dir=bench/results bench/profile/latency-profile.ts
 *   npx tsx bench/profile/summarize.ts bench/results/<file>.cpuprofile
 */

import { useRedis } from "../lib/redis-server.js";
import { runE2E } from "../sections/e2e.js";

const redis = await useRedis();
try {
  const s = await runE2E(
    "redis",
    {
      lightRatePerSec: 10,
      ratePerSec: 100,
      threads: 200,
      seconds: 5,
      streamChats: 1,
      streamTokens: 10,
      streamMs: 100,
    },
    redis.url,
  );
  process.stdout.write(`${JSON.stringify(s)}\n`);
} finally {
  await redis.server?.stop();
}
process.exit(0);
