/** The test platform as a channel: its settings (`channels.fake`), its secret and its adapter. */
import { Type } from "@sinclair/typebox";
import { defineChannel, required } from "../../../../src/adapters/channel.js";
import { Secret, SecretFile } from "../../../../src/adapters/config-schema.js";
import { FakeAdapter } from "./adapter.js";

/** The adapters the gateway built, newest last (the test reads what they posted). */
export const builtFakes: FakeAdapter[] = [];

export const fakeChannel = defineChannel({
  description: "A platform that exists only in a test.",
  fields: {
    token: Secret("Bot token. Default: $FAKE_TOKEN."),
    tokenFile: SecretFile("the bot token"),
    path: Type.String({ default: "/fake/inbound", description: "Path of the webhook." }),
  },
  env: { token: "FAKE_TOKEN" },
  requires: (c) => [{ field: "token", value: c.token, variable: "FAKE_TOKEN" }],
  async create(c) {
    const adapter = new FakeAdapter({
      token: required(c.token, "channels.fake.token", "FAKE_TOKEN"),
      path: c.path,
    });
    builtFakes.push(adapter);
    return adapter;
  },
});
