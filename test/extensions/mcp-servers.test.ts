/**
 * MCP servers as tools, through `McpServers` with real servers: the protocol's reference
 * "everything" server and the fake team server (test/fakes/mcp) over stdio inside the bubblewrap
 * sandbox, the team server over Streamable HTTP. What a user relies on: tools listed under
 * `<server>_<tool>`, calls answered (text and pictures), a server that cannot start or crashes
 * contained and reported once per thread, a slow call cancelled by the run's signal and told to
 * the server, a timeout, a list change seen, a server's credentials reaching that server only,
 * and a local server seeing neither another thread's workspace nor the network.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/agent/logger.js";
import { type McpServerSpec, McpServers, type McpToolCatalog } from "../../src/extensions/mcp/index.js";
import { type CommandRunner, createDirectRunner } from "../../src/extensions/tools/index.js";
import { ensureWorkspace } from "../../src/extensions/tools/workspace.js";
import { RemoteTeamServer } from "../fakes/mcp/remote.js";
import { bwrapRunner, bwrapUnavailable } from "../support/sandbox.js";

const unavailable = await bwrapUnavailable();
const repo = join(import.meta.dirname, "..", "..");
const modules = join(repo, "node_modules");
const fakes = join(repo, "test", "fakes", "mcp");
const TEAM = ["node", join(fakes, "team-server.mjs")];
const EVERYTHING = [
  "node",
  join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
  "stdio",
];
const FILESYSTEM = [
  "node",
  join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"),
  "/workspace",
];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function spec(name: string, over: Partial<McpServerSpec>): McpServerSpec {
  return {
    name,
    headers: {},
    env: {},
    network: "none",
    trusted: true,
    toolApproval: {},
    denyTools: [],
    callTimeoutMs: 20_000,
    startTimeoutMs: 20_000,
    idleTimeoutMs: 600_000,
    ...over,
  };
}

let root: string;
let runner: CommandRunner;
let remote: RemoteTeamServer;
const open: McpServers[] = [];

function servers(
  specs: McpServerSpec[],
  now?: () => number,
  o: { runner?: CommandRunner | null; catalog?: McpToolCatalog } = {},
): McpServers {
  // null: a process without a sandbox (a gateway).
  const chosen = o.runner === null ? undefined : (o.runner ?? runner);
  const s = new McpServers({
    specs,
    ...(chosen ? { runner: chosen } : {}),
    ...(o.catalog ? { catalog: o.catalog, catalogPrefix: "t:" } : {}),
    workspaceOf: (threadKey) => ensureWorkspace(root, threadKey, runner.owner),
    logger: silentLogger,
    ...(now ? { now } : {}),
  });
  open.push(s);
  return s;
}

const told: string[] = [];
const tell = async (text: string) => {
  told.push(text);
};
const textOf = (content: { type: string; text?: string }[]) =>
  content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

beforeAll(async () => {
  if (unavailable) return;
  root = mkdtempSync(join(tmpdir(), "sb-mcp-"));
  await chmod(root, 0o755);
  runner = await bwrapRunner({
    readOnlyPaths: [modules, fakes],
    source: { ...process.env, GATEWAY_SECRET: "gw-secret-1" },
  });
  remote = await RemoteTeamServer.start();
});
afterAll(async () => {
  for (const s of open) await s.close();
  await remote?.close();
});

describe.skipIf(unavailable)("MCP servers in the sandbox", () => {
  it("lists the reference server's tools as <server>_<tool> and calls them: text and a picture", async () => {
    const s = servers([spec("every", { command: EVERYTHING, trusted: false })]);
    const tools = await s.toolsFor("web:cA", "web", tell);
    const names = tools.map((t) => t.name);
    expect(names).toContain("every_echo");
    expect(names).toContain("every_get-tiny-image");
    // Not trusted: every tool asks an admin.
    expect(tools.every((t) => t.ask)).toBe(true);
    const echo = tools.find((t) => t.name === "every_echo");
    expect(echo?.inputSchema).toMatchObject({ type: "object" });
    expect(textOf(await s.call("every", "echo", { message: "hi there" }, "web:cA", undefined, tell))).toBe(
      "Echo: hi there",
    );
    const picture = await s.call("every", "get-tiny-image", {}, "web:cA", undefined, tell);
    expect(picture.some((c) => c.type === "image" && c.mimeType === "image/png")).toBe(true);
  });

  it("the reference filesystem server works in the thread's workspace, and only there", async () => {
    const s = servers([spec("files", { command: FILESYSTEM })]);
    const tools = (await s.toolsFor("web:cK", "web", tell)).map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(["files_write_file", "files_read_text_file", "files_list_directory"]),
    );
    await s.call(
      "files",
      "write_file",
      { path: "/workspace/notes.md", content: "# from MCP" },
      "web:cK",
      undefined,
      tell,
    );
    const workspace = await ensureWorkspace(root, "web:cK", runner.owner);
    expect(readFileSync(join(workspace, "notes.md"), "utf8")).toBe("# from MCP");
    await expect(
      s.call("files", "read_text_file", { path: "/etc/hostname" }, "web:cK", undefined, tell),
    ).rejects.toThrow(/outside allowed directories|Access denied/i);
  });

  it("the reference everything server over Streamable HTTP", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING[1] as string, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      let said = "";
      child.stderr?.on("data", (c: Buffer) => {
        said += c.toString();
      });
      await until(() => said.includes(`port ${port}`));
      const s = servers([spec("every", { url: `http://127.0.0.1:${port}/mcp` })]);
      const tools = (await s.toolsFor("web:cL", "web", tell)).map((t) => t.name);
      expect(tools).toContain("every_get-sum");
      expect(textOf(await s.call("every", "get-sum", { a: 2, b: 40 }, "web:cL", undefined, tell))).toMatch(
        /42/,
      );
    } finally {
      child.kill();
    }
  });

  it("tool lists are shared: a gateway lists them without a sandbox, another worker without starting the server", async () => {
    const catalog = memoryCatalog();
    const team = spec("team", { command: TEAM });
    const worker = servers([team], undefined, { runner, catalog });
    expect((await worker.toolsFor("web:cM", "web", tell)).map((t) => t.name)).toContain("team_echo");
    expect([...catalog.values.keys()]).toEqual([expect.stringMatching(/^t:mcp:tools:v1:team:[0-9a-f]{16}$/)]);

    const gateway = servers([team], undefined, { runner: null, catalog });
    const [seen] = await gateway.sharedStatus("web");
    expect(seen).toMatchObject({ server: "team", state: "ready" });
    expect(seen?.tools.map((t) => t.name)).toContain("team_grow");

    let starts = 0;
    const counting: CommandRunner = {
      ...runner,
      start: (argv, o) => {
        starts++;
        return runner.start(argv, o);
      },
    };
    // A stale list (only echo) is used at once, then read again when this worker starts the server.
    const [key] = [...catalog.values.keys()];
    const listed = JSON.parse(catalog.values.get(key as string) as string) as { name: string }[];
    catalog.values.set(key as string, JSON.stringify(listed.filter((t) => t.name === "echo")));
    const other = servers([team], undefined, { runner: counting, catalog });
    expect((await other.toolsFor("web:cN", "web", tell)).map((t) => t.name)).toEqual(["team_echo"]);
    expect(starts).toBe(0);
    expect(textOf(await other.call("team", "echo", { text: "x" }, "web:cN", undefined, tell))).toBe(
      "team echo: x",
    );
    expect(starts).toBe(1);
    await until(async () => (await other.toolsFor("web:cN", "web", tell)).length === listed.length);
  });

  it("a thread's local server stops after idleTimeoutMs without a call, and starts again on the next", async () => {
    const started: ReturnType<CommandRunner["start"]>[] = [];
    const watching: CommandRunner = {
      ...runner,
      start: (argv, o) => {
        const p = runner.start(argv, o);
        started.push(p);
        return p;
      },
    };
    const s = servers([spec("team", { command: TEAM, idleTimeoutMs: 300 })], undefined, { runner: watching });
    expect(textOf(await s.call("team", "echo", { text: "one" }, "web:cO", undefined, tell))).toBe(
      "team echo: one",
    );
    await started[0]?.exited;
    expect(textOf(await s.call("team", "echo", { text: "two" }, "web:cO", undefined, tell))).toBe(
      "team echo: two",
    );
    expect(started).toHaveLength(2);
    // A call that outlasts idleTimeoutMs is not cut by it: it ends by its own timeout.
    const long = servers([spec("team", { command: TEAM, idleTimeoutMs: 200, callTimeoutMs: 1500 })]);
    await expect(long.call("team", "slow", { tag: "idle" }, "web:cP", undefined, tell)).rejects.toThrow(
      /did not answer "slow" within 2 s/,
    );
  });

  it("a server that cannot start is left out and reported once per thread; the others answer", async () => {
    told.length = 0;
    const s = servers([
      spec("broken", { command: [...TEAM, "--fail-start"] }),
      spec("team", { command: TEAM }),
    ]);
    const first = await s.toolsFor("web:cB", "web", tell);
    expect(first.map((t) => t.server)).not.toContain("broken");
    expect(first.map((t) => t.name)).toContain("team_echo");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(
      /MCP server "broken" is unavailable: .*exited with code 2.*TEAM_LICENSE is not set/,
    );
    await s.toolsFor("web:cB", "web", tell);
    expect(told).toHaveLength(1);
    await s.toolsFor("web:cB2", "web", tell);
    expect(told).toHaveLength(2);
    expect(s.status().find((x) => x.server === "broken")).toMatchObject({ state: "failing" });
  });

  it("a crash during a call is an error result naming the exit; the next call starts the server afresh", async () => {
    const s = servers([spec("team", { command: TEAM })]);
    await s.toolsFor("web:cC", "web", tell);
    await expect(s.call("team", "crash", {}, "web:cC", undefined, tell)).rejects.toThrow(
      /MCP server "team" stopped during the call \(exited with code 3; it said: team server: crashing on purpose\)/,
    );
    expect(textOf(await s.call("team", "echo", { text: "back" }, "web:cC", undefined, tell))).toBe(
      "team echo: back",
    );
    // Other threads are not affected.
    expect(textOf(await s.call("team", "echo", { text: "new" }, "web:cC3", undefined, tell))).toBe(
      "team echo: new",
    );
    expect(s.status()[0]?.state).toBe("ready");
  });

  it("backoff: a server that does not start is tried again only after the wait, then once per window", async () => {
    let clock = 1_000_000;
    const s = servers([spec("broken", { command: [...TEAM, "--fail-start"] })], () => clock);
    await expect(s.call("broken", "echo", { text: "x" }, "web:cQ", undefined, tell)).rejects.toThrow(
      /is unavailable .*tried again in 1 s/,
    );
    await expect(s.call("broken", "echo", { text: "x" }, "web:cQ2", undefined, tell)).rejects.toThrow(
      /is unavailable .*tried again in 1 s/,
    );
    clock += 1500;
    await expect(s.call("broken", "echo", { text: "x" }, "web:cQ", undefined, tell)).rejects.toThrow(
      /is unavailable .*tried again in 2 s/,
    );
  });

  it("the run's signal cancels a slow call at once, and the server hears of it", async () => {
    const s = servers([spec("team", { command: TEAM })]);
    const workspace = await ensureWorkspace(root, "web:cD", runner.owner);
    const controller = new AbortController();
    const call = s.call("team", "slow", { tag: "d1" }, "web:cD", controller.signal, tell);
    const outcome = call.then(
      () => "answered",
      (e: Error) => e.message,
    );
    await until(() => readdirSync(workspace).includes("slow-d1.started"));
    controller.abort(new Error("stopped by /stop"));
    expect(await outcome).toBe("stopped by /stop");
    await until(() => readdirSync(workspace).includes("slow-d1.cancelled"));
  });

  it("a call past callTimeoutMs ends with a clear error", async () => {
    const s = servers([spec("team", { command: TEAM, callTimeoutMs: 300 })]);
    await expect(s.call("team", "slow", { tag: "t1" }, "web:cE", undefined, tell)).rejects.toThrow(
      /did not answer "slow" within 0 s; the call was cancelled/,
    );
  });

  it("an error result is an error; a list change is seen on the next listing", async () => {
    const s = servers([spec("team", { command: TEAM })]);
    await expect(s.call("team", "fail", {}, "web:cF", undefined, tell)).rejects.toThrow(
      "the tracker refused: quota exceeded",
    );
    const before = (await s.toolsFor("web:cF", "web", tell)).map((t) => t.name);
    expect(before).not.toContain("team_extra");
    await s.call("team", "grow", {}, "web:cF", undefined, tell);
    await until(async () => (await s.toolsFor("web:cF", "web", tell)).some((t) => t.name === "team_extra"));
    expect(textOf(await s.call("team", "extra", {}, "web:cF", undefined, tell))).toBe("extra works");
  });

  it("a server's variables reach that server only, never the gateway's own", async () => {
    const s = servers([
      spec("team", { command: TEAM, env: { TEAM_TOKEN: "team-secret-42" } }),
      spec("other", { command: TEAM }),
    ]);
    const team = textOf(await s.call("team", "env", {}, "web:cG", undefined, tell));
    expect(team).toContain("TEAM_TOKEN=team-secret-42");
    expect(team).not.toContain("GATEWAY_SECRET");
    const other = textOf(await s.call("other", "env", {}, "web:cG", undefined, tell));
    expect(other).toContain("TEAM_TOKEN=(unset)");
  });

  it("a local server sees its own workspace only and has no network", async () => {
    const s = servers([spec("team", { command: TEAM })]);
    const mine = await ensureWorkspace(root, "web:cH", runner.owner);
    const theirs = await ensureWorkspace(root, "web:cI", runner.owner);
    const out = textOf(
      await s.call("team", "probe", { path: theirs, port: remote.port }, "web:cH", undefined, tell),
    );
    expect(out).toMatch(new RegExp(`read ${theirs} failed: ENOENT`));
    expect(out).toMatch(/connect failed: (ECONNREFUSED|ENETUNREACH)/);
    expect(textOf(await s.call("team", "probe", { path: "/workspace" }, "web:cH", undefined, tell))).toBe(
      `read /workspace: ${readdirSync(mine).join(",") || "(empty)"}`,
    );
  });

  it("a remote server gets its headers, and a server that goes down is contained", async () => {
    const s = servers([
      spec("remote", { url: remote.url, headers: { Authorization: "Bearer remote-token-7" } }),
    ]);
    const tools = await s.toolsFor("web:cJ", "web", tell);
    expect(tools.map((t) => t.name)).toContain("remote_whoami");
    expect(textOf(await s.call("remote", "whoami", {}, "web:cJ", undefined, tell))).toBe(
      "authorization: Bearer remote-token-7",
    );
    expect(remote.authorizations.every((a) => a === "Bearer remote-token-7")).toBe(true);
    remote.down = true;
    try {
      await expect(s.call("remote", "echo", { text: "x" }, "web:cJ", undefined, tell)).rejects.toThrow(
        /MCP server "remote" failed the call of "echo": .*503/,
      );
    } finally {
      remote.down = false;
    }
    expect(textOf(await s.call("remote", "echo", { text: "again" }, "web:cJ", undefined, tell))).toBe(
      "team echo: again",
    );
  });
});

/** The catalog as Redis would hold it, in memory. */
function memoryCatalog(): McpToolCatalog & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    get: async (key) => values.get(key),
    set: async (key, value) => {
      values.set(key, value);
    },
  };
}

async function until(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("MCP servers without a sandbox", () => {
  it("every tool of an untrusted local server asks, whatever its approval says; a trusted one's do not", async () => {
    // As this process's own user: the checkout may sit below a directory only its owner may enter.
    const direct = createDirectRunner();
    const dir = mkdtempSync(join(tmpdir(), "sb-mcp-direct-"));
    await chmod(dir, 0o755);
    const s = new McpServers({
      specs: [
        spec("loose", { command: TEAM, trusted: false, approval: "allow" }),
        spec("team", { command: TEAM, trusted: true }),
      ],
      runner: direct,
      workspaceOf: (threadKey) => ensureWorkspace(dir, threadKey, direct.owner),
      logger: silentLogger,
    });
    open.push(s);
    const tools = await s.toolsFor("web:cZ", "web", tell);
    expect(tools.filter((t) => t.server === "loose").every((t) => t.ask)).toBe(true);
    expect(tools.filter((t) => t.server === "team").some((t) => t.ask)).toBe(false);
    expect(textOf(await s.call("team", "echo", { text: "direct" }, "web:cZ", undefined, tell))).toBe(
      "team echo: direct",
    );
  });
});
