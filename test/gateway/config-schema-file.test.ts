import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildEditorSchema } from "../../src/gateway/config/index.js";

const repo = join(import.meta.dirname, "..", "..");

describe("config/switchboard.schema.json (editor completion)", () => {
  it("is up to date with the TypeBox schema (regenerate: npx tsx scripts/gen-config-schema.ts)", () => {
    const committed: unknown = JSON.parse(
      readFileSync(join(repo, "config", "switchboard.schema.json"), "utf8"),
    );
    expect(committed).toEqual(buildEditorSchema());
  });

  it("lets a file leave out every defaulted field, and still catches mistakes", () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(buildEditorSchema());
    expect(validate({})).toBe(true);
    expect(validate(parse(readFileSync(join(repo, "config", "switchboard.example.yaml"), "utf8")))).toBe(
      true,
    );
    expect(validate({ channels: { telegram: { mode: "poll" } } })).toBe(false);
    expect(validate({ http: { prot: 1 } })).toBe(false);
  });
});
