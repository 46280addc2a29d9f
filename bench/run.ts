/**
 * `npm run bench`: Switchboard's performance figures, printed as a table and written as JSON to
 * bench/results/bench-<time>.json. Every figure is the median of several runs with min and max;
 * ratios are computed within one run. Where a figure has a target (issue 9), the verdict column
 * says whether the median meets it, or by how much it misses.
 *
 *   npm run bench                    full run (~5 minutes on 2 cores)
 *   npm run bench -- --quick         one short run of each section (smoke test)
 *   npm run bench -- --only e2e,sse  some sections only
 *
 * Redis: REDIS_URL when set, else a throwaway redis-server on a free port.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { useRedis } from "./lib/redis-server.js";
import { type Figure, fmt, verdict } from "./lib/stats.js";
import { SECTIONS, type SectionContext } from "./sections/index.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyArg = args.find((a) => a.startsWith("--only"));
const only = onlyArg
  ? (onlyArg.includes("=") ? onlyArg.split("=")[1] : args[args.indexOf(onlyArg) + 1])?.split(",")
  : undefined;

function machine() {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGb: Number((totalmem() / 2 ** 30).toFixed(1)),
    freeMemoryGb: Number((freemem() / 2 ** 30).toFixed(1)),
    node: process.version,
    loadAvgAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    platform: `${process.platform} ${process.arch}`,
  };
}

function printTable(figures: Figure[]): void {
  const rows = figures.map((f) => [
    f.section,
    f.name,
    fmt(f.summary.median),
    fmt(f.summary.min),
    fmt(f.summary.max),
    f.unit,
    verdict(f),
  ]);
  const head = ["section", "figure", "median", "min", "max", "unit", "target"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ");
  process.stdout.write(`${line(head)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const info = machine();
  process.stdout.write(
    `Switchboard bench${quick ? " (--quick)" : ""}: ${info.nproc} cores (${info.cpu}), ${info.memoryGb} GB, Node ${info.node}, load ${info.loadAvgAtStart.join(" ")}\n`,
  );
  const redis = await useRedis();
  const figures: Figure[] = [];
  const failures: string[] = [];
  const ctx: SectionContext = {
    quick,
    redisUrl: redis.url,
    ...(redis.server?.pid !== undefined ? { redisPid: redis.server.pid } : {}),
    log: (text) => process.stdout.write(`  ${text}\n`),
    add: (f) => figures.push(f),
  };
  try {
    for (const section of SECTIONS) {
      if (only && !only.includes(section.id)) continue;
      const t0 = Date.now();
      process.stdout.write(`[${section.id}] ${section.title}\n`);
      try {
        await section.run(ctx);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        failures.push(`${section.id}: ${msg}`);
        process.stdout.write(`  FAILED: ${msg}\n`);
      }
      process.stdout.write(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    await redis.server?.stop();
  }
  process.stdout.write("\n");
  printTable(figures);
  const result = {
    at: new Date(started).toISOString(),
    quick,
    machine: { ...info, loadAvgAtEnd: loadavg().map((l) => Number(l.toFixed(2))) },
    redis: process.env.REDIS_URL ? "REDIS_URL" : "throwaway redis-server",
    durationSec: (Date.now() - started) / 1000,
    figures: figures.map((f) => ({ ...f, verdict: verdict(f) })),
    failures,
  };
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = `${dir}bench-${result.at.replace(/[:.]/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\n${figures.length} figures in ${result.durationSec.toFixed(0)} s; JSON: ${file}\n`);
  if (failures.length) {
    process.stdout.write(`Sections that failed:\n${failures.map((f) => `  ${f}`).join("\n")}\n`);
    process.exitCode = 1;
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
