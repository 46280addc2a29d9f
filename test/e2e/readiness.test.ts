/**
 * `/readyz` means "can serve": with Telegram long polling it is 200 as soon as the poll runs, not
 * after the first `getUpdates` comes back (on a quiet bot that is the whole poll timeout, 25 s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway/app/index.js";
import { until, World } from "./support/world.js";

let world: World;
let app: Gateway;

beforeAll(async () => {
  world = await World.create({ redis: false });
  app = await world.start("all", { channels: ["telegram"] });
});
afterAll(async () => {
  await world?.close();
});

describe("readiness", () => {
  it("/readyz is 200 while the first long poll is still held open by Telegram", async () => {
    await until(
      () => world.telegram.calls.some((c) => c.method === "getUpdates" && c.params.timeout === 25),
      "the first long poll",
    );
    const res = await fetch(`${app.url}/readyz`);
    const report = (await res.json()) as {
      ok: boolean;
      probes: { name: string; ok: boolean; detail?: string }[];
    };
    expect(res.status).toBe(200);
    expect(report.probes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "telegram", ok: true, detail: "telegram:polling: connected" }),
      ]),
    );
    // The poll is still open: nothing came back yet.
    expect(world.telegram.calls.filter((c) => c.method === "getUpdates")).toHaveLength(1);
  });

  it("polls with channels.telegram.pollTimeoutSeconds from the config", async () => {
    const other = await World.create({ redis: false });
    try {
      await other.start("all", { channels: ["telegram"], telegramPollTimeoutSeconds: 7 });
      const poll = await until(
        () => other.telegram.calls.find((c) => c.method === "getUpdates" && c.params.timeout !== 0),
        "the first long poll",
      );
      expect(poll.params.timeout).toBe(7);
    } finally {
      await other.close();
    }
  });
});
