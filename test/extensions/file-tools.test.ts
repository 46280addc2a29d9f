import { execFileSync } from "node:child_process";
import { link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentToolResult } from "../../src/agent/types.js";
import { createBuiltinTools, selectTools } from "../../src/extensions/tools/index.js";
import { workspaceDirName } from "../../src/extensions/tools/workspace.js";

let base: string;
let ws: string;
let secret: string;
let tools: ReturnType<typeof createBuiltinTools>;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "sb-tools-"));
  ws = join(base, "ws");
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(join(base, "outside"));
  secret = join(base, "outside", "secret.txt");
  await writeFile(secret, "TOP SECRET\n");
  await writeFile(join(ws, "src", "app.ts"), "const a = 1;\nconst b = 2;\nconst a2 = 1;\n");
  await symlink(join(base, "outside"), join(ws, "out-dir"));
  await symlink(secret, join(ws, "out-file"));
  await symlink(join(base, "outside", "missing.txt"), join(ws, "dangling"));
  await symlink(join(ws, "src", "app.ts"), join(ws, "inside-link"));
  tools = createBuiltinTools(ws, { files: { maxReadBytes: 200, defaultReadLines: 3, maxFileBytes: 10_000 } });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function call(name: keyof typeof tools, args: Record<string, unknown>): Promise<AgentToolResult> {
  return tools[name].execute("t1", args);
}

function textOf(result: AgentToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe("workspace confinement", () => {
  const escapes: [string, () => string, RegExp][] = [
    ["a .. path", () => "../outside/secret.txt", /is outside the workspace/],
    ["a nested .. path", () => "src/../../outside/secret.txt", /is outside the workspace/],
    ["an absolute path outside", () => secret, /is outside the workspace/],
    ["/etc/passwd", () => "/etc/passwd", /is outside the workspace/],
    ["a symlinked directory pointing out", () => "out-dir/secret.txt", /through a symlink/],
    ["a symlinked file pointing out", () => "out-file", /through a symlink/],
    ["a dangling symlink", () => "dangling", /symlink whose target does not exist/],
  ];

  for (const [what, path, why] of escapes) {
    it(`read, write, edit and ls refuse ${what}`, async () => {
      const p = path();
      await expect(call("read", { path: p })).rejects.toThrow(why);
      await expect(call("write", { path: p, content: "pwned" })).rejects.toThrow(why);
      await expect(call("edit", { path: p, oldText: "TOP", newText: "pwned" })).rejects.toThrow(why);
      await expect(call("ls", { path: p })).rejects.toThrow(why);
    });
  }

  it("nothing outside was changed or created", async () => {
    expect(await readFile(secret, "utf8")).toBe("TOP SECRET\n");
    await expect(readFile(join(base, "outside", "missing.txt"), "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("refusals say how to fix the call", async () => {
    await expect(call("read", { path: "../x" })).rejects.toThrow(
      'Path "../x" is outside the workspace. Only paths inside the workspace are allowed; use a path relative to the workspace root.',
    );
  });

  it("absolute paths and symlinks that stay inside are fine", async () => {
    expect(textOf(await call("read", { path: join(ws, "src", "app.ts") }))).toContain("const a = 1;");
    expect(textOf(await call("read", { path: "inside-link" }))).toContain("const b = 2;");
  });
});

describe("read", () => {
  it("returns a window of lines and says how to read on", async () => {
    await writeFile(
      join(ws, "lines.txt"),
      `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n")}\n`,
    );
    expect(textOf(await call("read", { path: "lines.txt" }))).toBe(
      "line 1\nline 2\nline 3\n\n[Lines 1-3 of 10. Use offset=4 to read on.]",
    );
    expect(textOf(await call("read", { path: "lines.txt", offset: 9, limit: 5 }))).toBe("line 9\nline 10");
    await expect(call("read", { path: "lines.txt", offset: 11 })).rejects.toThrow(
      "Offset 11 is past the end",
    );
  });

  it("caps the bytes returned", async () => {
    await writeFile(join(ws, "wide.txt"), `${"x".repeat(150)}\n${"y".repeat(150)}\n`);
    const out = textOf(await call("read", { path: "wide.txt" }));
    expect(out).toContain("x".repeat(150));
    expect(out).not.toContain("y");
    expect(out).toContain("Use offset=2");
  });

  it("refuses files over the size cap, binary files, directories and missing files", async () => {
    await writeFile(join(ws, "big.txt"), "z".repeat(20_000));
    await expect(call("read", { path: "big.txt" })).rejects.toThrow(/20000 bytes, more than the 10000 bytes/);
    await writeFile(join(ws, "blob.bin"), Buffer.from([1, 0, 2, 3]));
    await expect(call("read", { path: "blob.bin" })).rejects.toThrow(/looks binary/);
    await expect(call("read", { path: "src" })).rejects.toThrow(/is a directory/);
    await expect(call("read", { path: "nope.txt" })).rejects.toThrow('File "nope.txt" does not exist.');
  });
});

describe("write, edit, ls", () => {
  it("write creates parent directories", async () => {
    expect(textOf(await call("write", { path: "new/deep/file.md", content: "# hi\n" }))).toBe(
      "Wrote 5 bytes to new/deep/file.md.",
    );
    expect(await readFile(join(ws, "new", "deep", "file.md"), "utf8")).toBe("# hi\n");
  });

  it("edit replaces one exact occurrence", async () => {
    await writeFile(join(ws, "e.ts"), "let x = 1;\nlet y = $1;\n");
    expect(
      textOf(await call("edit", { path: "e.ts", oldText: "let y = $1;", newText: "let y = $&2;" })),
    ).toBe("Edited e.ts at line 2.");
    expect(await readFile(join(ws, "e.ts"), "utf8")).toBe("let x = 1;\nlet y = $&2;\n");
  });

  it("edit fails when the old text is missing or not unique, changing nothing", async () => {
    const before = await readFile(join(ws, "src", "app.ts"), "utf8");
    await expect(call("edit", { path: "src/app.ts", oldText: "const c", newText: "x" })).rejects.toThrow(
      /oldText was not found in "src\/app.ts"/,
    );
    await expect(call("edit", { path: "src/app.ts", oldText: "= 1;", newText: "= 3;" })).rejects.toThrow(
      'oldText occurs 2 times in "src/app.ts"; include more surrounding text so it is unique.',
    );
    expect(await readFile(join(ws, "src", "app.ts"), "utf8")).toBe(before);
  });

  it("ls lists directories with / and symlinks with @", async () => {
    const out = textOf(await call("ls", {}));
    expect(out.split("\n")).toEqual(
      expect.arrayContaining(["src/", "out-dir@", "inside-link@", "lines.txt"]),
    );
    expect(textOf(await call("ls", { path: "src" }))).toBe("app.ts");
    await expect(call("ls", { path: "lines.txt" })).rejects.toThrow(/is a file, not a directory/);
  });
});

describe("tool selection and workspaces", () => {
  it("a channel gets the tools its config names; unknown names are a clear error", () => {
    expect(selectTools(tools, ["read", "ls"]).map((t) => t.name)).toEqual(["read", "ls"]);
    expect(() => selectTools(tools, ["read", "rm"])).toThrow(
      'Unknown tool "rm" in the channel\'s tools. Available: bash, read, write, edit, ls.',
    );
  });

  it("thread keys map to distinct, safe directory names", () => {
    const a = workspaceDirName("slack:T1:C2:1712.33");
    expect(a).toMatch(/^slack_T1_C2_1712\.33-[0-9a-f]{8}$/);
    expect(workspaceDirName("../../etc")).not.toContain("/");
    expect(workspaceDirName("a/b")).not.toBe(workspaceDirName("a_b"));
  });
});

describe("files that are not regular files", () => {
  let special: string;
  let specialTools: ReturnType<typeof createBuiltinTools>;
  let sock: Server;

  beforeAll(async () => {
    special = await mkdtemp(join(tmpdir(), "sb-special-"));
    execFileSync("mkfifo", [join(special, "pipe")]);
    sock = createServer();
    await new Promise<void>((r) => sock.listen(join(special, "sock"), r));
    // A device needs mknod, which needs root; the FIFO and socket cases hold either way.
    if (process.getuid?.() === 0) execFileSync("mknod", [join(special, "null-dev"), "c", "1", "3"]);
    await writeFile(join(special, "plain.txt"), "plain\n");
    specialTools = createBuiltinTools(special);
  });
  afterAll(async () => {
    await new Promise((r) => sock.close(r));
    await rm(special, { recursive: true, force: true });
  });

  const kinds = () => [
    ["pipe", "a FIFO (named pipe)"],
    ["sock", "a socket"],
    ...(process.getuid?.() === 0 ? [["null-dev", "a character device"]] : []),
  ];

  it("read, write and edit refuse a FIFO, a socket and a device without opening them", async () => {
    for (const [name, kind] of kinds()) {
      for (const [tool, args] of [
        ["read", { path: name }],
        ["write", { path: name, content: "x" }],
        ["edit", { path: name, oldText: "a", newText: "b" }],
      ] as const) {
        await expect(specialTools[tool].execute("t", args), `${tool} ${name}`).rejects.toThrow(
          `"${name}" is ${kind}; the file tools only open regular files and list directories. Use bash for anything else.`,
        );
      }
      await expect(specialTools.ls.execute("t", { path: name })).rejects.toThrow(
        `"${name}" is ${kind}; ls lists directories.`,
      );
    }
  });

  it("many such calls at once neither block nor starve Node's thread pool", async () => {
    const calls = Array.from({ length: 24 }, (_, i) => {
      const [name] = kinds()[i % kinds().length] ?? ["pipe"];
      const tool = (["read", "edit", "write"] as const)[i % 3] ?? "read";
      const args =
        tool === "read"
          ? { path: name }
          : tool === "edit"
            ? { path: name, oldText: "a", newText: "b" }
            : { path: name, content: "x" };
      return specialTools[tool].execute(`t${i}`, args).then(
        () => "ran",
        () => "refused",
      );
    });
    expect(await Promise.all(calls)).toEqual(calls.map(() => "refused"));
    // The pool still works: a regular file reads at once.
    const plain = await specialTools.read.execute("p", { path: "plain.txt" });
    expect(plain.content[0]).toMatchObject({ text: "plain" });
  });

  it("ls marks special files with |", async () => {
    const out = textOf(await specialTools.ls.execute("t", {}));
    expect(out.split("\n")).toEqual(expect.arrayContaining(["pipe|", "sock|", "plain.txt"]));
  });

  it("write refuses a file with other hard links (it could be a file outside under another name)", async () => {
    await writeFile(join(special, "orig.txt"), "original\n");
    await link(join(special, "orig.txt"), join(special, "alias.txt"));
    await expect(specialTools.write.execute("t", { path: "alias.txt", content: "changed" })).rejects.toThrow(
      '"alias.txt" has 1 other hard link(s); the file tools do not change such files.',
    );
    expect(await readFile(join(special, "orig.txt"), "utf8")).toBe("original\n");
  });

  it("a stopped run stops the call before it touches anything", async () => {
    const stop = new AbortController();
    stop.abort();
    await expect(
      specialTools.write.execute("t", { path: "never.txt", content: "x" }, stop.signal),
    ).rejects.toThrow("Stopped: the run was stopped");
    await expect(readFile(join(special, "never.txt"))).rejects.toThrow();
  });

  it("paths under the sandbox's /workspace mean the workspace when the tools are told so", async () => {
    const aliased = createBuiltinTools(special, { files: { workspaceAlias: "/workspace" } });
    const out = await aliased.read.execute("t", { path: "/workspace/plain.txt" });
    expect(out.content[0]).toMatchObject({ text: "plain" });
    await expect(aliased.read.execute("t", { path: "/workspace/../etc/passwd" })).rejects.toThrow(
      "outside the workspace",
    );
  });
});
