/**
 * config/switchboard.example.yaml is what docs/configuration.md promises: "every setting", each at
 * its default. Checked against the config schema itself: every field the schema has appears in the
 * file (as a setting, or as a commented setting `# name: example` where it has no default), nothing
 * appears that the schema lacks, every setting written out carries the schema's default, and the
 * file passes `switchboard check`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { createCliHandlers } from "../../src/gateway/app/index.js";
import { runCli } from "../../src/gateway/cli/index.js";
import { ConfigSchema } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";

const repo = join(import.meta.dirname, "..", "..");
const file = join(repo, "config", "switchboard.example.yaml");
const text = readFileSync(file, "utf8");

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  default?: unknown;
}

/** Every field of the schema, as `a.b.c` (`models.custom[*].id` for fields of list items). */
function schemaFields(node: SchemaNode, path = "", out = new Map<string, SchemaNode>()) {
  if (node.type === "object" && node.properties) {
    for (const [k, v] of Object.entries(node.properties)) schemaFields(v, path ? `${path}.${k}` : k, out);
  } else if (node.type === "array" && node.items?.type === "object") {
    schemaFields(node.items, `${path}[*]`, out);
  } else out.set(path, node);
  return out;
}

/**
 * The setting paths the file writes out (`written`) and shows as comments (`commented`): a key line,
 * or a comment line `# name: …` whose name starts in lower case, nested by its indentation (a
 * comment's key counts from its `#`). Keys of `{ a: 1 }` mappings count as children.
 */
function settingsOf(yaml: string): { written: Set<string>; commented: Set<string> } {
  const written = new Set<string>();
  const commented = new Set<string>();
  const stack: { indent: number; segment: string }[] = [];
  const pathOf = () =>
    stack.map((s) => s.segment).reduce((p, s) => (s === "[*]" ? `${p}[*]` : p ? `${p}.${s}` : s), "");
  for (const line of yaml.split("\n")) {
    const active = /^(\s*)(-\s+)?([A-Za-z_][\w-]*):(\s.*|)$/.exec(line);
    const comment = /^(\s*)# (\s*)(-\s+)?([a-z]\w*):(\s.*|)$/.exec(line);
    if (!active && !comment) continue;
    const indent = active
      ? (active[1] ?? "").length
      : (comment?.[1] ?? "").length + (comment?.[2] ?? "").length;
    const item = active ? active[2] : comment?.[3];
    const key = (active ? active[3] : comment?.[4]) as string;
    const rest = (active ? active[4] : comment?.[5]) ?? "";
    while (stack.length > 0 && (stack.at(-1)?.indent ?? 0) >= indent) stack.pop();
    if (item) stack.push({ indent, segment: "[*]" });
    const keyIndent = item ? indent + item.length : indent;
    stack.push({ indent: keyIndent, segment: key });
    const into = active && !line.trimStart().startsWith("#") ? written : commented;
    into.add(pathOf());
    const flow = /^\s*\{(.*)\}/.exec(rest.replace(/\s+#.*$/, ""));
    for (const m of flow?.[1]?.matchAll(/([A-Za-z_][\w-]*)\s*:/g) ?? []) into.add(`${pathOf()}.${m[1]}`);
  }
  return { written, commented };
}

/** The value at `path` of the parsed file (undefined when absent). */
function valueAt(root: unknown, path: string): unknown {
  let node = root;
  for (const part of path.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const fields = schemaFields(ConfigSchema as SchemaNode);
const { written, commented } = settingsOf(text);
const underField = (path: string) =>
  fields.has(path) ||
  [...fields.keys()].some((f) => path.startsWith(`${f}.`)) ||
  // a section or list item on the way to a field
  [...fields.keys()].some((f) => f.startsWith(`${path}.`) || f.startsWith(`${path}[*]`));

describe("config/switchboard.example.yaml", () => {
  it("shows every setting the config schema has", () => {
    expect(fields.size).toBeGreaterThan(100);
    const missing = [...fields.keys()].filter((f) => !written.has(f) && !commented.has(f));
    expect(missing, "settings the example leaves out").toEqual([]);
  });

  it("shows nothing the schema lacks", () => {
    const unknown = [...written, ...commented].filter((p) => !underField(p));
    expect(unknown).toEqual([]);
  });

  it("writes out each setting that has a default with that default", () => {
    const parsed = parseYaml(text) as unknown;
    const wrong: string[] = [];
    for (const path of written) {
      const field = fields.get(path);
      if (!field || !("default" in field) || path.includes("[*]")) continue;
      const value = valueAt(parsed, path);
      if (typeof value === "string" && value.includes("${")) continue;
      if (JSON.stringify(value) !== JSON.stringify(field.default))
        wrong.push(`${path}: ${JSON.stringify(value)}, the default is ${JSON.stringify(field.default)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("passes switchboard check as it is", async () => {
    let out = "";
    const code = await runCli(["check", "--offline", "--port", "0", "--config", file], {
      handlers: createCliHandlers(),
      env: {},
      cwd: repo,
      handleSignals: false,
      createLogger: () => silentProcessLogger(),
      io: {
        stdout: (t) => {
          out += t;
        },
        stderr: (t) => {
          out += t;
        },
      },
    });
    expect(code, out).toBe(0);
  });
});
