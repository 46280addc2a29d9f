#!/usr/bin/env node
// The `switchboard` command: loads tsx's ESM hooks into this Node process and runs src/main.ts,
// TypeScript without a build step. One process, so signals (Ctrl-C, `docker stop`) and the exit
// code need no forwarding.
import { register } from "tsx/esm/api";

register();
await import(new URL("../src/main.ts", import.meta.url).href);
