// The fake team MCP server over stdio (see team-tools.mjs). `--fail-start` exits at once with a
// message, as a server missing its configuration does.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createTeamServer } from "./team-tools.mjs";

if (process.argv.includes("--fail-start")) {
  process.stderr.write("team server: TEAM_LICENSE is not set\n");
  process.exit(2);
}
await createTeamServer().connect(new StdioServerTransport());
