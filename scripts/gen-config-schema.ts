/**
 * Writes config/switchboard.schema.json from the TypeBox config schema, for editor completion
 * (`# yaml-language-server: $schema=./switchboard.schema.json` at the top of switchboard.yaml).
 * Run after changing src/gateway/config/schema.ts: `npx tsx scripts/gen-config-schema.ts`.
 * test/gateway/config-schema-file.test.ts fails while the committed file is out of date.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEditorSchema } from "../src/gateway/config/json-schema.js";

const target = join(dirname(fileURLToPath(import.meta.url)), "..", "config", "switchboard.schema.json");
writeFileSync(target, `${JSON.stringify(buildEditorSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${target}\n`);
