/**
 * `send_file` under a worker kill, through the CLI (`switchboard start --role gateway` and two
 * `--role worker` processes over Redis) and the fake Slack: the worker is SIGKILLed while Slack
 * holds its `files.completeUploadExternal`, which Slack then carries out (the file is shared, the
 * dead worker never reads the answer). The next worker finishes what the render journal owes: it
 * asks `files.info` about the staged file, finds the share, and uploads nothing again; the
 * interrupted call tells the model the file is on its way. The thread shows the file once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest, ScriptedReply } from "../fakes/llm-server.js";
import { BOT_USER_ID } from "../fakes/slack/server.js";
import { CliProcess } from "./support/cli-process.js";
import { lastUserText, SLACK_ADMIN, until, World } from "./support/world.js";

let world: World;
const running: CliProcess[] = [];
let seq = 0;

/** `[send]` writes report.txt, then sends it; a tool result is reported back. */
function model(request: RecordedRequest): ScriptedReply {
  const messages =
    (request.body.messages as Array<{ role: string; content: unknown; tool_calls?: unknown }>) ?? [];
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const calls = messages.at(-2)?.tool_calls as Array<{ function: { name: string } }> | undefined;
    const name = calls?.[0]?.function.name;
    if (name === "write")
      return {
        toolCalls: [
          { id: `call_${++seq}`, name: "send_file", args: { path: "report.txt", caption: "The report." } },
        ],
      };
    return { text: `alpha saw the ${name} result: ${String(last.content).slice(0, 200)}` };
  }
  if (lastUserText(request).includes("[send]"))
    return {
      toolCalls: [
        { id: `call_${++seq}`, name: "write", args: { path: "report.txt", content: "kill-proof\n" } },
      ],
    };
  return { text: "alpha answers" };
}

beforeAll(async () => {
  world = await World.create();
  world.llm.respondWith("openai-completions", model);
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.kill("SIGKILL")));
  await world?.close();
});

function launch(role: "gateway" | "worker", name: string): CliProcess {
  const path = world.writeConfig(`${name}.yaml`, { channels: ["slack"], logLevel: "info" });
  const p = new CliProcess(["start", "--role", role, "--config", path], { cwd: world.dir, env: world.env() });
  running.push(p);
  return p;
}

describe("send_file when its worker is killed mid-upload (Slack, Redis)", () => {
  it("shows the file in the thread exactly once", async () => {
    const gateway = launch("gateway", "gw");
    const first = launch("worker", "w-1");
    const [url] = (await gateway.waitForLine(/Listening on (\S+)/, 90_000)).slice(1);
    world.slack.eventsUrl = `${url}/slack/events`;
    await Promise.all([gateway, first].map((p) => p.waitForLog("switchboard started", {}, 90_000)));

    const channel = "CKILLFILE";
    world.slack.channel(channel);
    world.slack.holdMethod("files.completeUploadExternal");
    const { message } = await world.slack.userMessage({
      channel,
      user: SLACK_ADMIN,
      text: "[send] the report",
      mention: true,
    });
    await until(
      () => world.slack.held("files.completeUploadExternal") > 0 || undefined,
      "the held share",
      60_000,
    );
    await first.kill("SIGKILL");
    // Slack carries out the share the dead worker asked for; nobody reads its answer.
    world.slack.releaseMethod("files.completeUploadExternal");
    const shared = () => world.slack.files.botFiles(channel).filter((f) => f.name === "report.txt");
    await until(() => shared().length > 0 || undefined, "the share", 30_000);

    const second = launch("worker", "w-2");
    await second.waitForLog("switchboard started", {}, 90_000);
    const replies = () => world.slack.view(channel).find((v) => v.ts === message.ts)?.replies ?? [];
    await until(
      () =>
        // The whole answer: it streams in, and its first edit may end before the result's words.
        replies().some(
          (r) =>
            r.user === BOT_USER_ID &&
            /saw the send_file result[\s\S]*finished by the next worker/.test(r.text),
        ) || undefined,
      "the answer after the recovery",
      90_000,
    );
    expect(shared()).toHaveLength(1);
    expect(shared()[0]?.bytes.toString()).toBe("kill-proof\n");
    expect(world.slack.api.calls.filter((c) => c.method === "files.completeUploadExternal")).toHaveLength(1);
    // The model was told the file is finished by the next worker, not that it failed outright.
    const told = replies().find((r) => r.text.includes("saw the send_file result"))?.text ?? "";
    expect(told).toMatch(/finished by the next worker/);
  }, 240_000);
});
