#!/usr/bin/env node
// The `switchboard` command: runs the compiled entry point, dist/main.js, which `npm install` builds
// (the `prepare` script; `npm run build` rebuilds it). One process, so signals (Ctrl-C,
// `docker stop`) and the exit code need no forwarding. `npm run dev` runs the TypeScript sources
// through tsx instead.
import { existsSync, readdirSync, statSync } from "node:fs";

const entry = new URL("../dist/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    "switchboard: the compiled code (dist/) is missing. Run `npm run build` in the Switchboard " +
      "directory (`npm install` does it too), or `npm run dev` to run the TypeScript sources.\n",
  );
  process.exit(1);
}

/** Newest modification time under `dir` (ms), or 0 when it does not exist. */
function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (!e.isFile()) continue;
    latest = Math.max(latest, statSync(`${e.parentPath ?? e.path}/${e.name}`).mtimeMs);
  }
  return latest;
}

// In a checkout, sources edited after the last build would run as old code without a word.
const sources = new URL("../src/", import.meta.url);
if (existsSync(sources) && newest(sources) > statSync(entry).mtimeMs) {
  process.stderr.write(
    "switchboard: src/ has changed since dist/ was built; this runs the old build. " +
      "Run `npm run build` (or `npm run dev` to run the sources).\n",
  );
}

await import(entry.href);
