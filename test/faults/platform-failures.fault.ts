/**
 * 20% of the bot's platform calls fail: through the full Telegram pipeline (polling adapter →
 * Redis runtime → worker → renderer → adapter), a proxy fails every fifth send/edit/delete/typing
 * call with 429 (retry_after 1 s), 500 or 502. 30 chats stream a reply each; every final reply must
 * end up visible in its chat.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Pipeline, startPipeline } from "../../bench/lib/pipeline.js";
import { redisUrl } from "../support/redis.js";
import { type FailingProxy, startFailingProxy } from "./failing-proxy.js";
import { report, waitFor } from "./support.js";

describe("fault: 20% of platform calls fail with 429 or 5xx", () => {
  let pipeline: Pipeline | undefined;
  let proxy: FailingProxy | undefined;
  afterAll(async () => {
    await pipeline?.close();
    await proxy?.close();
  });

  it("delivers every final reply", async () => {
    pipeline = await startPipeline({
      mode: "redis",
      redisUrl: redisUrl(),
      apiRoot: async (root) => {
        proxy = await startFailingProxy(root, { share: 0.2 });
        return proxy.root;
      },
    });
    const p = pipeline;
    const chats = 30;
    const tags: { chat: number; tag: string }[] = [];
    for (let i = 0; i < chats; i++) {
      const tag = `m${700 + i}`;
      tags.push({ chat: 20_000 + i, tag });
      p.inject(20_000 + i, `stream [${tag}] tokens=60 ms=2000`);
    }
    const finalVisible = () =>
      tags.filter(({ chat, tag }) => {
        const text = p.model.finalText.get(tag);
        if (text === undefined) return false;
        const bot = p.fake.botMessages(chat).filter((m) => !m.deleted);
        return bot.some((m) => m.text.trim() === text.trim());
      }).length;
    let visible = 0;
    try {
      await waitFor(
        () => {
          visible = finalVisible();
          return visible === chats;
        },
        40_000,
        "every final reply to be visible",
      );
    } finally {
      const injected = proxy?.injected;
      const duplicates = tags.filter(
        ({ chat }) => p.fake.botMessages(chat).filter((m) => !m.deleted).length > 1,
      ).length;
      report("20% platform failures (429/500/502)", {
        chats,
        finalVisible: visible,
        injected429: injected?.status429,
        injected5xx: injected?.status5xx,
        chatsWithExtraBotMessages: duplicates,
        deliveryErrors: p.errors.length,
      });
    }
    expect(visible).toBe(chats);
    // A failed send is retried, never posted twice.
    expect(tags.filter(({ chat }) => p.fake.botMessages(chat).filter((m) => !m.deleted).length > 1)).toEqual(
      [],
    );
    expect((proxy?.injected.status429 ?? 0) + (proxy?.injected.status5xx ?? 0)).toBeGreaterThan(20);
  });
});
