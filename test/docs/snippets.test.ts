/**
 * The docs are tested: every config and command in README.md and docs/*.md either runs here or is
 * visibly marked as an illustration (a code block whose first line is a comment starting with
 * "Illustration").
 *
 * - Each `yaml` block is a config file: `switchboard check --offline` must accept it (everything
 *   start would refuse, model ids, tool names and extension modules included). `${VAR}` references
 *   get placeholder values, `…File` paths point at placeholder files and relative extension modules
 *   are written, as a deployment provides them.
 * - Each command, in `sh` blocks, command lines of untagged blocks and inline code: `switchboard`
 *   (also through `npx`, `npm start --`, `npm run dev --`, `node bin/switchboard.js` and
 *   `docker compose run <service>`) must parse with the documented options, and `--help` runs for
 *   every command named; `npm run` scripts must exist; files run with `node`/`npx tsx` must exist;
 *   `docker compose` must name services of docker-compose.yml.
 * - Settings tables (configuration.md's sections, and any table after "Set under `path`") name
 *   only fields the config schema has; a setting named in a code span exists, and one written with a
 *   value (`tools.sandbox.mode: bwrap`) is valid with that value.
 * - Links and repository paths in code spans must point at files (and headings) that exist.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { resetRegisteredModels } from "../../src/agent/llm/models.js";
import { createCliHandlers } from "../../src/gateway/app/index.js";
import { COMMANDS, type CommandName, parseCommandLine, runCli } from "../../src/gateway/cli/index.js";
import { ConfigSchema, parseConfigText } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";

const repo = join(import.meta.dirname, "..", "..");
const docs = [
  "README.md",
  ...readdirSync(join(repo, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const scripts = (
  JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts;
const services = Object.keys(
  (parseYaml(readFileSync(join(repo, "docker-compose.yml"), "utf8"), { merge: true }) as { services: object })
    .services,
);

interface Block {
  doc: string;
  line: number;
  lang: string;
  body: string;
}

/** Fenced code blocks (also indented ones inside list items), with the line of the opening fence. */
function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(repo, doc), "utf8").split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)/.exec(lines[i] as string);
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++)
      body.push((lines[j] as string).slice(indent));
    out.push({ doc, line: i + 1, lang: open[2] ?? "", body: body.join("\n") });
    i = j;
  }
  return out;
}

/** Inline code spans outside fenced blocks, with their line. */
function spansOf(doc: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fenced = false;
  readFileSync(join(repo, doc), "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      if (fenced) return;
      for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ text: m[1] as string, line: i + 1 });
    });
  return out;
}

const isIllustration = (b: Block) => /^\s*(#|\/\/)\s*Illustration\b/i.test(b.body);

/** Splits a shell line into words (quotes kept together); stops at a comment. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"[^"]*"|'[^']*'|\S+/g)) {
    if (m[0].startsWith("#")) break;
    out.push(m[0]);
  }
  return out;
}

/** `switchboard` arguments as documented, with placeholders made concrete: `<thread key>` → x. */
function concrete(args: readonly string[]): string[] {
  return args
    .join(" ")
    .replace(/^<command>/, "--help") // `switchboard <command>`: the overview names them all
    .replace(/<[^>]*>/g, "x")
    .replace(/[[\]]/g, " ")
    .split(/\s+/)
    .filter((w) => w !== "" && !w.includes("…"))
    .map((w) => (w.includes("|") && !w.startsWith("-") ? (w.split("|")[0] as string) : w));
}

const commandsNamed = new Set<CommandName>();

/** Problems with one documented command line (empty when it checks out). */
function checkCommand(line: string): string[] {
  const segment = line.replace(/^\$\s+/, "").split(/\s*(?:&&|;|\|)\s*/)[0] ?? "";
  let w = words(segment);
  const redirect = w.findIndex((x) => /^\d?>/.test(x));
  if (redirect !== -1) w = w.slice(0, redirect);
  while (w[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0])) w = w.slice(1);
  const [program, ...rest] = w;
  const cli = (args: string[]): string[] => {
    const argv = concrete(args);
    try {
      const parsed = parseCommandLine(argv, {});
      if (parsed.kind !== "help" && parsed.kind !== "version") commandsNamed.add(parsed.kind);
      else if (parsed.kind === "help" && parsed.topic) commandsNamed.add(parsed.topic);
      return [];
    } catch (err) {
      return [`switchboard ${argv.join(" ")}: ${(err as Error).message}`];
    }
  };
  const afterDashes = (args: string[]) => (args[0] === "--" ? args.slice(1) : args);
  const file = (path: string | undefined): string[] => {
    if (!path) return [];
    const source = path.replace(/^dist\/(.*)\.js$/, "src/$1.ts"); // dist/ is built from src/
    return existsSync(join(repo, source)) ? [] : [`${path} does not exist`];
  };
  switch (program) {
    case undefined:
    case "export":
      return [];
    case "switchboard":
      return cli(rest);
    case "npx":
      if (rest[0] === "switchboard") return cli(rest.slice(1));
      if (rest[0] === "tsx") return rest[1] === "src/main.ts" ? cli(rest.slice(2)) : file(rest[1]);
      return [`npx ${rest[0]}: not a command of this repository`];
    case "node": {
      const args = [...rest];
      while (args[0]?.startsWith("-")) {
        const flag = args.shift() as string;
        if (["--import", "--require", "-r"].includes(flag)) args.shift();
      }
      if (args[0] === "bin/switchboard.js") return cli(args.slice(1));
      return file(args[0]);
    }
    case "npm": {
      const [sub, ...more] = rest;
      if (sub === "install" || sub === "i" || sub === "ci") return [];
      if (sub === "start") return scripts.start ? cli(afterDashes(more)) : ["npm start: no start script"];
      if (sub === "test") return scripts.test ? [] : ["npm test: no test script"];
      if (sub === "run") {
        const [script, ...args] = more;
        if (!script || !scripts[script]) return [`npm run ${script}: no such script in package.json`];
        return script === "dev" ? cli(afterDashes(args)) : [];
      }
      return [`npm ${sub}: not checked; mark the block as an illustration`];
    }
    case "docker": {
      if (rest[0] !== "compose") return [`docker ${rest[0]}: not checked; mark the block as an illustration`];
      const [sub, ...args] = rest.slice(1);
      const unknown = (names: string[]) =>
        names
          .filter((n) => !services.includes(n))
          .map((n) => `docker compose: no service "${n}" in docker-compose.yml`);
      if (sub === "run") {
        const opts = args.filter((a) => a.startsWith("-"));
        const positional = args.filter((a) => !a.startsWith("-"));
        if (opts.some((o) => o !== "--rm"))
          return [`docker compose run ${opts.join(" ")}: options not checked`];
        return [...unknown(positional.slice(0, 1)), ...cli(positional.slice(1))];
      }
      if (sub === "up") {
        const scaled = args.filter((a) => a.includes("=")).map((a) => a.split("=")[0] as string);
        return unknown(scaled);
      }
      if (sub === "logs") return unknown(args.filter((a) => !a.startsWith("-")));
      return [`docker compose ${sub}: not checked; mark the block as an illustration`];
    }
    default:
      return [`${program}: not a command the docs test can check; mark the block as an illustration`];
  }
}

/** Command lines of a block: all of an `sh` block, the `$ ` lines and command-like lines otherwise. */
function commandLines(b: Block): string[] {
  const lines = b.body.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
  if (["sh", "bash", "shell", "console"].includes(b.lang)) return lines;
  if (b.lang !== "") return [];
  return lines.filter(
    (l) => /^\$\s/.test(l) || /^([A-Z_]+=\S*\s+)*(npm|npx|node|switchboard|docker)\s/.test(l),
  );
}

const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");

function anchorsOf(path: string): Set<string> {
  const text = readFileSync(path, "utf8");
  return new Set([...text.matchAll(/^#+\s+(.*)$/gm)].map((m) => slug(m[1] as string)));
}

const tmp = mkdtempSync(join(tmpdir(), "sb-docs-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A secret as a deployment provides it, in the shape every platform's token has to have. */
const PLACEHOLDER_SECRET = "123456789:placeholder-secret-0123456789";

/**
 * A config block made runnable as a deployment would have it: placeholder files for `…File` fields,
 * placeholder variables, and the extension modules it names at their paths (a module that does not
 * exist is a problem `check` reports, like `start`).
 */
function prepare(b: Block, dir: string): { file: string; env: Record<string, string> } {
  let text = b.body;
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) env[m[1] as string] = PLACEHOLDER_SECRET;
  let n = 0;
  text = text.replace(/^(\s*[A-Za-z]+File:\s*)(\S+)\s*$/gm, (_all, key: string) => {
    const secret = join(dir, `secret-${++n}`);
    writeFileSync(secret, `${PLACEHOLDER_SECRET}\n`);
    return `${key}${secret}`;
  });
  const modules = (parseYaml(text) as { extensions?: { modules?: unknown[] } } | null)?.extensions?.modules;
  for (const m of modules ?? []) {
    if (typeof m !== "string" || !m.startsWith(".")) continue;
    const path = join(dir, m);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "export default () => {};\n");
  }
  const file = join(dir, "switchboard.yaml");
  writeFileSync(file, text);
  return { file, env };
}

async function check(file: string, env: Record<string, string>, cwd: string) {
  let out = "";
  // Any free port: a documented port may be taken on this machine, which check rightly reports.
  const code = await runCli(["check", "--offline", "--port", "0", "--config", file], {
    handlers: createCliHandlers(),
    env,
    cwd,
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
  return { code, out };
}

const blocks = docs.flatMap(blocksOf);
const configs = blocks.filter((b) => (b.lang === "yaml" || b.lang === "yml") && !isIllustration(b));

describe("docs: configs", () => {
  it("the docs show configs to check (the extraction works)", () => {
    expect(configs.length).toBeGreaterThan(5);
  });

  it.each(configs.map((b) => [`${b.doc}:${b.line}`, b] as const))(
    "%s passes switchboard check",
    async (_at, b) => {
      const dir = join(tmp, `${b.doc.replace(/\W/g, "_")}-${b.line}`);
      mkdirSync(dir, { recursive: true });
      const { file, env } = prepare(b, dir);
      resetRegisteredModels(); // each snippet on its own: no custom model left from the one before
      const r = await check(file, env, dir);
      expect(r.code, `${b.doc}:${b.line}\n${b.body}\n--- switchboard check said:\n${r.out}`).toBe(0);
    },
  );
});

describe("docs: commands", () => {
  const lines = [
    ...blocks
      .filter((b) => !isIllustration(b))
      .flatMap((b) => commandLines(b).map((text) => ({ at: `${b.doc}:${b.line}`, text }))),
    ...docs.flatMap((doc) =>
      spansOf(doc)
        .filter((s) => /^(switchboard \S|npx |npm |node \S|docker compose )/.test(s.text))
        .map((s) => ({ at: `${doc}:${s.line}`, text: s.text })),
    ),
  ];

  it("each documented command exists with the options shown", () => {
    expect(lines.length).toBeGreaterThan(20);
    const problems = lines.flatMap((l) => checkCommand(l.text).map((p) => `${l.at}: \`${l.text}\`: ${p}`));
    expect(problems).toEqual([]);
  });

  it("--help answers for every command the docs name", async () => {
    expect([...commandsNamed].sort()).toEqual(expect.arrayContaining(["check", "export", "start"]));
    for (const command of commandsNamed) {
      let out = "";
      const code = await runCli([command, "--help"], {
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
      expect(out).toMatch(new RegExp(`^Usage: switchboard ${command}`));
    }
    expect(COMMANDS).toEqual(expect.arrayContaining([...commandsNamed]));
  });
});

describe("docs: links and paths", () => {
  it("every relative link points at a file (and heading) that exists", () => {
    const broken: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(repo, doc), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split("#");
        const full = path ? resolve(dirname(join(repo, doc)), path) : join(repo, doc);
        if (!existsSync(full)) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor && full.endsWith(".md") && !anchorsOf(full).has(anchor)) {
          broken.push(`${doc}: ${target} (no such heading in ${relative(repo, full)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("every repository path in a code span exists, and none points outside the repository", () => {
    const missing: string[] = [];
    for (const doc of docs) {
      for (const s of spansOf(doc)) {
        const path = s.text.replace(/^\.\//, "");
        if (/^\.\.\//.test(s.text)) {
          missing.push(`${doc}:${s.line}: ${s.text} is outside the repository`);
          continue;
        }
        if (!/^(src|test|bench|scripts|docs|bin)\/[\w./-]+\.[a-z]+$/.test(path)) continue;
        if (!existsSync(join(repo, path))) missing.push(`${doc}:${s.line}: ${s.text}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/** Whether the config schema has `path` (`channels.slack.mode`); `*` matches any property. */
function schemaHas(path: string): boolean {
  let nodes: unknown[] = [ConfigSchema];
  for (const part of path.split(".")) {
    nodes = nodes.flatMap((n) => {
      // A list's fields are its items' (`tools.mcp.servers.name`).
      const node = n as {
        properties?: Record<string, unknown>;
        items?: { properties?: Record<string, unknown> };
      };
      const props = node.properties ?? node.items?.properties ?? {};
      return part === "*" ? Object.values(props) : props[part] ? [props[part]] : [];
    });
  }
  return nodes.length > 0;
}

describe("docs: settings tables", () => {
  it("name only fields the config accepts", () => {
    const wrong: string[] = [];
    const field = /^`([a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)*)`/;
    for (const doc of docs) {
      let base: string | undefined;
      readFileSync(join(repo, doc), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const section = doc === "docs/configuration.md" ? /^###\s+`([a-z]+)`/.exec(line) : null;
          if (section) base = section[1];
          else if (/^#/.test(line)) base = undefined;
          const under = /Set under `([a-z][\w.]*)`/.exec(line);
          if (under) base = under[1];
          const cell = line.startsWith("| ") ? field.exec(line.slice(2)) : null;
          if (!base || !cell) return;
          const name = cell[1] as string;
          if (!schemaHas(`${base}.${name}`) && !schemaHas(`${base}.*.${name}`)) {
            wrong.push(`${doc}:${i + 1}: ${base}.${name} is not a config field`);
          }
        });
    }
    expect(wrong).toEqual([]);
  });
});

/** The config sections; a code span starting with one of them and a dot names a setting. */
const SECTIONS = Object.keys(ConfigSchema.properties);

/** A config file that sets `path` (`<platform>` and `*` read as telegram) to the YAML scalar `value`. */
function configSetting(path: string, value: string): string {
  const parts = path.replace(/<platform>|\*/g, "telegram").split(".");
  return parts.map((p, i) => `${"  ".repeat(i)}${p}:${i === parts.length - 1 ? ` ${value}` : ""}`).join("\n");
}

describe("docs: settings named in the text", () => {
  const named = docs.flatMap((doc) =>
    spansOf(doc).flatMap((s) => {
      const m = /^([a-z][A-Za-z]*(?:\.(?:<platform>|\*|[a-z][A-Za-z]*))+)(?:: (.+))?$/.exec(s.text);
      if (!m || !SECTIONS.includes((m[1] as string).split(".")[0] as string)) return [];
      return [{ at: `${doc}:${s.line}`, path: m[1] as string, value: m[2] }];
    }),
  );

  it("a setting written with a value (`tools.sandbox.mode: bwrap`) is a field that takes it", () => {
    const written = named.filter((n) => n.value !== undefined && !n.value.includes("…"));
    expect(written.length).toBeGreaterThan(5);
    const wrong: string[] = [];
    for (const n of written) {
      const path = n.path.replace(/<platform>|\*/g, "telegram");
      const r = parseConfigText(configSetting(n.path, n.value as string), { env: {}, baseDir: tmp });
      const issues = r.ok ? [] : r.issues.filter((i) => i.path === path || i.path.startsWith(`${path}.`));
      if (!schemaHas(n.path.replace(/<platform>/g, "*")) || issues.length > 0)
        wrong.push(
          `${n.at}: \`${n.path}: ${n.value}\` ${issues.map((i) => i.message).join("; ") || "is not a setting"}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  it("a setting named without a value exists, where its section's next key is a setting", () => {
    const wrong = named
      .filter((n) => n.value === undefined)
      // `runtime.deliver`, `agent.prompt`: code, not settings (the second key is none of the section's).
      .filter((n) =>
        schemaHas(
          n.path
            .split(".")
            .slice(0, 2)
            .join(".")
            .replace(/<platform>/g, "*"),
        ),
      )
      .filter((n) => !schemaHas(n.path.replace(/<platform>/g, "*")))
      .map((n) => `${n.at}: \`${n.path}\` is not a setting`);
    expect(wrong).toEqual([]);
  });
});
