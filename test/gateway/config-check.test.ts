/**
 * What `start` refuses beyond the schema, as the wiring finds it (and `check` reports it): a
 * default model the catalogue lacks, with the ids it was probably meant to be, and tool names no
 * loaded extension registers, with the closest name and the list.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resetRegisteredModels } from "../../src/agent/llm/models.js";
import { toolIssues } from "../../src/gateway/app/config-check.js";
import { loadExtensions } from "../../src/gateway/app/extensions.js";
import { closestModelRefs, modelIssues, registerConfiguredModels } from "../../src/gateway/app/models.js";
import { formatIssue, parseConfigText } from "../../src/gateway/config/index.js";
import { silentProcessLogger } from "../../src/gateway/log.js";
import { MemoryApprovalStore } from "../../src/queue/approvals/index.js";

afterEach(() => resetRegisteredModels());

function configOf(yaml: string) {
  const r = parseConfigText(yaml, { env: {}, baseDir: "/srv/sb" });
  if (!r.ok) throw new Error(r.issues.map(formatIssue).join("\n"));
  return r.config;
}

describe("models.default", () => {
  it("a typo names the closest known ids; an unknown provider lists the providers", () => {
    expect(closestModelRefs("anthropic/claude-sonet-4-5")[0]).toBe("anthropic/claude-sonnet-4-5");
    const typo = configOf("models:\n  default: anthropic/claude-sonet-4-5\n");
    registerConfiguredModels(typo.models);
    expect(modelIssues(typo.models).map(formatIssue)).toEqual([
      expect.stringMatching(
        /^models\.default: "anthropic\/claude-sonet-4-5" is not a known model; the closest are "anthropic\/claude-sonnet-4-5"/,
      ),
    ]);
    const nowhere = configOf("models:\n  default: fake/nope\n");
    expect(modelIssues(nowhere.models)[0]?.message).toContain("the providers are anthropic, openai, google");
  });

  it("an unknown id under a known provider asks whether one of that provider's models was meant", () => {
    const one = configOf(
      "models:\n  default: fake/nope\n  custom:\n    - { provider: fake, id: fake-1, api: openai-completions, baseUrl: http://127.0.0.1:9/v1 }\n",
    );
    registerConfiguredModels(one.models);
    expect(modelIssues(one.models)[0]?.message).toMatch(
      /^"fake\/nope" is not a known model; did you mean "fake\/fake-1"\?/,
    );
    const many = configOf("models:\n  default: anthropic/opus\n");
    expect(modelIssues(many.models)[0]?.message).toMatch(
      /^"anthropic\/opus" is not a known model; did you mean one of "anthropic\/[^"]+", .*\(anthropic has \d+\)\?/,
    );
  });

  it("a bare id names the model as /model takes it", () => {
    const bare = configOf("models:\n  default: claude-sonnet-4-5\n");
    registerConfiguredModels(bare.models);
    expect(modelIssues(bare.models)).toEqual([]);
  });

  it("a model defined under models.custom is known", () => {
    const config = configOf(
      "models:\n  default: local/m1\n  custom:\n    - { provider: local, id: m1, api: openai-completions, baseUrl: http://127.0.0.1:9/v1 }\n",
    );
    expect(modelIssues(config.models)).toHaveLength(1);
    registerConfiguredModels(config.models);
    expect(modelIssues(config.models)).toEqual([]);
  });
});

describe("tool names", () => {
  it("a channel's tools and approval.tools must be tools an extension registers", async () => {
    const config = configOf("channels:\n  web:\n    tools: [read, grep, ls]\napproval:\n  tools: [bsh]\n");
    const runner = await loadExtensions({
      extensions: config.extensions,
      approval: config.approval,
      approvalStore: new MemoryApprovalStore(),
      isAdmin: () => false,
      workspaceRoot: "/tmp/sb-config-check",
      baseDir: "/srv/sb",
      logger: silentProcessLogger(),
    });
    expect(toolIssues(config, runner).map(formatIssue)).toEqual([
      'channels.web.tools[1]: "grep" is not a tool. The tools are bash, read, write, edit, ls, send_file, spawn_sub_agent (docs/tools.md)',
      'approval.tools[0]: "bsh" is not a tool; did you mean "bash"? The tools are bash, read, write, edit, ls, send_file, spawn_sub_agent (docs/tools.md)',
    ]);
  });
});
