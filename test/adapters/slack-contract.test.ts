import { runAdapterContract } from "./contract.js";
import { createSlackHarness } from "./harness/slack.js";

runAdapterContract("slack over the HTTP Events API", () => createSlackHarness({ mode: "http" }));
runAdapterContract("slack over Socket Mode", () => createSlackHarness({ mode: "socket" }));
