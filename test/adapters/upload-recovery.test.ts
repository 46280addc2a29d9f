/**
 * `send_file`'s upload under the render journal, with a worker that dies at each step, on the real
 * adapters against the platform fakes: the record the dying worker left is finished by the next
 * holder (`finishOwedRender`) so the thread shows the file exactly once. The one window left is
 * Telegram's (no key, no way to find an upload): a worker that dies after Telegram took the file
 * but before it read the answer leaves the file twice, as it would a message.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { journaledUpload } from "../../src/adapters/render/durable-upload.js";
import { finishOwedRender } from "../../src/adapters/render/owed.js";
import { MemoryRateLimiter } from "../../src/adapters/render/rate-limiter.js";
import type { ChannelAdapter, InboundMessage, MessageRef, RenderLog } from "../../src/adapters/types.js";
import { silentLogger } from "../../src/agent/logger.js";
import type { ContractHarness } from "./contract.js";
import { createDiscordHarness } from "./harness/discord.js";
import { createSlackHarness } from "./harness/slack.js";
import { until } from "./support/drive.js";
import { createTelegramHarness } from "./telegram/harness.js";

/** The journal as one worker sees it: the last snapshot and the posted ids. */
class Journal implements RenderLog {
  snapshot: unknown;
  readonly ids = new Map<string, MessageRef>();
  done_ = false;
  async owe(snapshot: unknown) {
    this.snapshot = structuredClone(snapshot);
  }
  posted(key: string, ref: MessageRef) {
    this.ids.set(key, ref);
  }
  async saved() {}
  async done() {
    this.done_ = true;
  }
  held() {
    return true;
  }
}

class Died extends Error {}

/** `adapter` whose upload dies at `when`: before the platform sees it, or after it took the file. */
function dying(adapter: ChannelAdapter, when: "before" | "after"): ChannelAdapter {
  const upload = adapter.uploadFile?.bind(adapter) as NonNullable<ChannelAdapter["uploadFile"]>;
  return new Proxy(adapter, {
    get(target, p) {
      if (p === "uploadFile")
        return async (...args: Parameters<typeof upload>) => {
          if (when === "before") throw new Died();
          await upload(...args);
          throw new Died();
        };
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const harnesses: Array<[string, () => Promise<ContractHarness>]> = [
  ["slack", () => createSlackHarness({ mode: "socket" })],
  ["discord", () => createDiscordHarness()],
  ["telegram", () => createTelegramHarness()],
];

describe.each(harnesses)("an upload on %s whose worker dies", (platform, make) => {
  let h: ContractHarness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function setUp() {
    h = await make();
    await h.groupMessage({ text: "the report, please", mention: true });
    await until(() => (h as ContractHarness).received.messages.length === 1, 5000, "the mention");
    const m = h.received.messages[0] as InboundMessage;
    dir = mkdtempSync(join(tmpdir(), "sb-upload-"));
    const path = join(dir, "report.txt");
    const bytes = Buffer.from("totals\n");
    writeFileSync(path, bytes);
    return { m, file: { path, name: "report.txt", sizeBytes: bytes.length, mimeType: "text/plain" }, bytes };
  }

  const finish = (adapter: ChannelAdapter, threadKey: string, j: Journal) =>
    finishOwedRender(
      {
        adapter,
        threadKey,
        clock: (h as ContractHarness).clock,
        limiter: new MemoryRateLimiter(),
        logger: silentLogger,
      },
      j.snapshot,
      j,
      () => true,
      j.ids,
    );

  for (const when of ["before", "after"] as const) {
    it(`shows the file once when the worker died ${when} the platform took it`, async () => {
      const { m, file, bytes } = await setUp();
      const harness = h as ContractHarness;
      const j = new Journal();
      await expect(
        journaledUpload(dying(harness.adapter, when), m.threadKey, j, file, { caption: "Here it is." }),
      ).rejects.toBeInstanceOf(Died);
      expect(j.done_).toBe(false);
      // The next holder, with a journal of its own that starts from what the dead one left.
      const next = new Journal();
      next.snapshot = j.snapshot;
      for (const [k, v] of j.ids) next.ids.set(k, v);
      expect(await finish(harness.adapter, m.threadKey, next)).toBe(true);
      const files = harness.botFiles?.(m.threadKey) ?? [];
      const twice = when === "after" && platform === "telegram";
      expect(files).toHaveLength(twice ? 2 : 1);
      expect(files[0]).toEqual({
        name: "report.txt",
        bytes,
        caption: expect.stringContaining("Here it is."),
      });
      // Finishing the same record again changes nothing.
      expect(await finish(harness.adapter, m.threadKey, next)).toBe(true);
      expect(harness.botFiles?.(m.threadKey) ?? []).toHaveLength(twice ? 2 : 1);
    });
  }

  it("says in the thread that a file gone from the workspace could not be sent", async () => {
    const { m, file } = await setUp();
    const harness = h as ContractHarness;
    const j = new Journal();
    await expect(
      journaledUpload(dying(harness.adapter, "before"), m.threadKey, j, file),
    ).rejects.toBeInstanceOf(Died);
    rmSync(file.path);
    expect(await finish(harness.adapter, m.threadKey, j)).toBe(true);
    expect(harness.thread(m.threadKey).at(-1)).toEqual({
      text: expect.stringContaining("report.txt could not be sent: it is no longer in the workspace"),
      fromBot: true,
    });
    expect(harness.botFiles?.(m.threadKey)).toEqual([]);
  });
});
