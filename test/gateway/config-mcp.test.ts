// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references
/**
 * `tools.mcp.servers` in the config: what a mistake in it gets (each problem named by its field),
 * and the credentials it hands to servers treated as credentials everywhere (an auth scheme before
 * a reference is fine; the variables are refused in `tools.sandbox.env` and masked).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collectSecretValues, formatIssue, parseConfigText } from "../../src/gateway/config/index.js";

const dir = mkdtempSync(join(tmpdir(), "sb-config-mcp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (yaml: string, env: Record<string, string> = {}) => parseConfigText(yaml, { env, baseDir: dir });

function issues(yaml: string, env: Record<string, string> = {}): string[] {
  const r = load(yaml, env);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.issues.map((i) => formatIssue({ ...i, line: undefined }));
}

const servers = (...lines: string[]) => ["tools:", "  mcp:", "    servers:", ...lines].join("\n");

describe("tools.mcp.servers", () => {
  it("fills the defaults of a server", () => {
    const r = load(servers("      - name: files", "        command: [mcp-files, /workspace]"));
    if (!r.ok) throw new Error(r.issues.map((i) => formatIssue(i)).join("\n"));
    expect(r.config.tools.mcp.servers[0]).toMatchObject({
      name: "files",
      command: ["mcp-files", "/workspace"],
      network: "none",
      trusted: false,
      callTimeoutMs: 60000,
      startTimeoutMs: 20000,
      idleTimeoutMs: 600000,
      denyTools: [],
    });
  });

  it("names each mistake by its field: both kinds, neither, a repeated name, fields of the other kind, an unknown platform", () => {
    const out = issues(
      servers(
        "      - name: both",
        "        command: [x]",
        "        url: https://mcp.example.com/mcp",
        "      - name: neither",
        "      - name: Both",
        "        url: https://mcp.example.com/mcp",
        "        env: { A: b }",
        "        network: host",
        "      - name: local",
        "        command: [x]",
        "        headers: { X-Team: blue }",
        "        channels: [slak]",
      ),
    );
    expect(out).toEqual([
      "tools.mcp.servers[0]: needs exactly one of command (a local server, e.g. command: [npx, some-mcp-server]) and url (a remote one)",
      "tools.mcp.servers[1]: needs exactly one of command (a local server, e.g. command: [npx, some-mcp-server]) and url (a remote one)",
      'tools.mcp.servers[2].name: repeats "Both" of tools.mcp.servers[0]',
      "tools.mcp.servers[2].env: applies to local servers (command) only; a remote server gets headers",
      "tools.mcp.servers[2].network: applies to local servers only; remote servers are called from the worker",
      "tools.mcp.servers[3].headers: applies to remote servers (url) only; a local server gets env",
      "tools.mcp.servers[3].channels[0]: names no platform; use one of slack, discord, telegram, web",
    ]);
  });

  it("refuses a bad name, approval value or URL by the schema", () => {
    const out = issues(
      servers("      - name: has_underscore", "        url: ftp://x", "        approval: maybe"),
    );
    expect(out.join("\n")).toMatch(/tools\.mcp\.servers\[0\]\.name/);
    expect(out.join("\n")).toMatch(/tools\.mcp\.servers\[0\]\.url/);
    expect(out.join("\n")).toMatch(/tools\.mcp\.servers\[0\]\.approval/);
  });

  it("a header may put an auth scheme before its reference; a literal token is still refused", () => {
    const ok = load(
      servers(
        "      - name: linear",
        "        url: https://mcp.linear.app/mcp",
        '        headers: { Authorization: "Bearer ${LINEAR_KEY}" }',
      ),
      { LINEAR_KEY: "lin-123456789" },
    );
    if (!ok.ok) throw new Error(ok.issues.map((i) => formatIssue(i)).join("\n"));
    expect(ok.config.tools.mcp.servers[0]?.headers.Authorization).toBe("Bearer lin-123456789");
    expect(
      issues(
        servers(
          "      - name: linear",
          "        url: https://mcp.linear.app/mcp",
          "        headers: { Authorization: Bearer lin-123456789 }",
        ),
      ),
    ).toEqual([
      expect.stringMatching(
        /^tools\.mcp\.servers\[0\]\.headers\.Authorization: secrets are not accepted as literal values/,
      ),
    ]);
  });

  it("what servers get is a credential: refused in tools.sandbox.env, masked everywhere", () => {
    const env = { GH: "ghp-abcdefgh1234", LINEAR_KEY: "lin-123456789" };
    const yaml = [
      "tools:",
      "  sandbox:",
      "    env: [GH]",
      "  mcp:",
      "    servers:",
      "      - name: github",
      "        command: [gh-mcp]",
      '        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GH}" }',
      "      - name: linear",
      "        url: https://mcp.linear.app/mcp",
      '        headers: { Authorization: "Bearer ${LINEAR_KEY}" }',
    ].join("\n");
    expect(issues(yaml, env)).toEqual([
      expect.stringMatching(
        /^tools\.sandbox\.env\[0\]: is GH, which holds one of Switchboard's own credentials \(it feeds tools\.mcp\.servers\[0\]\.env\.GITHUB_PERSONAL_ACCESS_TOKEN\)/,
      ),
    ]);
    const r = load(yaml.replace("  sandbox:\n    env: [GH]\n", ""), env);
    if (!r.ok) throw new Error(r.issues.map((i) => formatIssue(i)).join("\n"));
    const secrets = collectSecretValues(r.config, env);
    expect(secrets).toContain("ghp-abcdefgh1234");
    expect(secrets).toContain("lin-123456789");
  });
});
