/**
 * `npm run build`, also run by `npm install` / `npm ci` (the `prepare` script): compiles src/ to
 * dist/ with tsc (tsconfig.build.json) and copies the files the code reads at run time (Lua scripts,
 * the web chat's page) beside the compiled modules, then writes the config validator precompiled
 * (src/gateway/config/validate.ts says why). dist/ is emptied first, so JavaScript of a deleted
 * source file never lingers. Plain JavaScript, so it runs before anything is built.
 *
 *   node scripts/build.js [--out-dir <dir>] [--if-stale]    default: dist/
 *
 * `--if-stale` (the `prepare` script: `npm install`, and `npx switchboard`, which installs the
 * checkout into its cache on first use and runs `prepare` there) builds only when a source is newer
 * than the last complete build (its stamp file), so a first `npx switchboard` in a built checkout
 * answers in seconds instead of compiling everything again without a word.
 *
 * The build imports the modules it compiled (to precompile the validator), so an --out-dir
 * outside the repository needs the packages reachable from it (a node_modules beside or above).
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");
const outArg = process.argv.indexOf("--out-dir");
const dist = outArg === -1 ? join(root, "dist") : resolve(process.argv[outArg + 1] ?? "dist");

/** Written last: a build that failed halfway leaves none, so the next `--if-stale` builds again. */
const stamp = join(dist, ".build-stamp");

/** Newest modification time of `path` and, for a directory, of everything under it (0: missing). */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A directory's own time changes when a file in it is deleted or renamed.
  let latest = stat.mtimeMs;
  for (const e of readdirSync(path, { withFileTypes: true, recursive: true })) {
    latest = Math.max(latest, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return latest;
}

if (process.argv.includes("--if-stale")) {
  const inputs = ["src", "package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build.js"];
  const built = newest(stamp);
  if (built > 0 && inputs.every((p) => newest(join(root, p)) <= built)) {
    process.stdout.write("build: dist/ is up to date with src/; nothing to build.\n");
    process.exit(0);
  }
}

/**
 * Says what is happening on standard error, and on the terminal when npx runs this build: npx
 * installs the checkout into its cache and runs `prepare` there with its output hidden, so without
 * this a first `npx switchboard` after a change waits half a minute without a word.
 */
function announce(text) {
  process.stderr.write(text);
  if (process.env.npm_command !== "exec") return;
  try {
    const tty = openSync("/dev/tty", "w");
    writeSync(tty, text);
    closeSync(tty);
  } catch {
    // No terminal (CI, a pipe): nobody is waiting at one.
  }
}

announce("build: compiling src/ into dist/ (about half a minute; once after each change)…\n");
rmSync(dist, { recursive: true, force: true });
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  process.stderr.write(
    "build: the TypeScript compiler is not installed. Run `npm install` (with dev dependencies) first.\n",
  );
  process.exit(1);
}
const compiled = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", dist], {
  cwd: root,
  stdio: "inherit",
});
if (compiled.status !== 0) {
  process.stderr.write(
    "build: tsc failed; dist/ is incomplete. Fix the errors above and run `npm run build`.\n",
  );
  process.exit(compiled.status ?? 1);
}
cpSync(src, dist, {
  recursive: true,
  filter: (path) => !path.endsWith(".ts") || statSync(path).isDirectory(),
});

const validate = await import(pathToFileURL(join(dist, "gateway", "config", "validate.js")).href);
writeFileSync(
  join(dist, "gateway", "config", validate.PRECOMPILED_VALIDATOR_FILE),
  validate.precompiledValidatorSource(),
);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
