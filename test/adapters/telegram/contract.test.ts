import { runAdapterContract } from "../contract.js";
import { createTelegramHarness } from "./harness.js";

runAdapterContract("telegram", () => createTelegramHarness());
