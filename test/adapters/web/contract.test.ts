import { runAdapterContract } from "../contract.js";
import { createWebHarness } from "./harness.js";

runAdapterContract("web", () => createWebHarness());
