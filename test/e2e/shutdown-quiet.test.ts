/**
 * Shutting down while a tool call waits for an admin's approval, as `docker stop` does it (SIGTERM to
 * `switchboard start`): the process stops within its grace period, exits 0, and logs no error and no
 * error object (no stack trace): a run stopped by a shutdown is not a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeChat } from "../fakes/telegram/server.js";
import { CliProcess } from "./support/cli-process.js";
import { TG_USERS, until, World } from "./support/world.js";

let world: World;
beforeAll(async () => {
  world = await World.create({ redis: false });
});
afterAll(async () => {
  await world?.close();
});

describe("SIGTERM with an approval pending", () => {
  it("stops quietly: exit 0, no error and no stack logged", async () => {
    const config = world.writeConfig("quiet.yaml", { channels: ["telegram"], logLevel: "info" });
    const p = new CliProcess(["start", "--config", config], { cwd: world.dir, env: world.env() });
    try {
      await p.waitForLog("switchboard started");
      const chat: FakeChat = { id: -100700001, type: "supergroup", title: "Ops" };
      world.telegram.userMessage({ chat, from: TG_USERS.alice, text: "clean up please [rm]", mention: true });
      await until(
        () => world.telegram.botMessages(chat.id).find((m) => m.text.includes("Approval needed")),
        "the approval request",
      );
      expect(await p.stop()).toBe(0);
      const loud = p.logs().filter((l) => l.level === "error" || l.level === "fatal" || l.err !== undefined);
      expect(loud, JSON.stringify(loud, null, 2)).toEqual([]);
      expect(p.lines.join("\n")).not.toMatch(/\n\s+at \S+ \(/);
      expect(p.stderr.join("\n")).toBe("");
    } finally {
      await p.kill();
    }
  });
});
