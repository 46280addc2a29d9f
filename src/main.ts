/**
 * Entry point of `npm start`. The gateway (channels, runtime, web chat) lands with later issues;
 * until then this says so instead of pretending to run.
 */
const message = [
  "Switchboard 0.1.0",
  "Built so far: the agent engine (src/agent). Not built yet: providers, session stores, the runtime,",
  "channels and the web chat. See the status table in README.md.",
].join("\n");
process.stdout.write(`${message}\n`);
