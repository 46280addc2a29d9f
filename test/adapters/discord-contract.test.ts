import { runAdapterContract } from "./contract.js";
import { createDiscordHarness } from "./harness/discord.js";

runAdapterContract("discord", () => createDiscordHarness());
