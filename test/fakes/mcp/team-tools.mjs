// The tools of a fake "team" MCP server, for the tests (plain JavaScript: it runs inside the
// sandbox with the system's node, without tsx). Built on the SDK's low-level Server so the JSON
// Schemas, list changes and cancellation are exactly what the test asks for:
// - echo {text}: returns the text;
// - env: the names of its environment variables, and TEAM_TOKEN's value (what the server was given);
// - probe {path, host, port}: tries to list a directory and open a TCP connection, says what happened;
// - slow {tag}: writes /workspace/slow-<tag>.started, then waits until cancelled and writes
//   /workspace/slow-<tag>.cancelled (or answers after 120 s);
// - crash: the process exits with code 3 (stdio) before answering;
// - picture: a 1×1 PNG and a line of text;
// - fail: an error result ("the tracker refused: quota exceeded");
// - grow: adds the tool "extra" and tells the client the list changed;
// - whoami (HTTP only): the Authorization header the request carried.
import { readdir, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const obj = (properties = {}, required = []) => ({ type: "object", properties, required });

const BASE_TOOLS = [
  { name: "echo", description: "Echo the text back", inputSchema: obj({ text: { type: "string" } }, ["text"]) },
  { name: "env", description: "List the server's environment variables", inputSchema: obj() },
  {
    name: "probe",
    description: "Try to read a directory and to open a TCP connection",
    inputSchema: obj({ path: { type: "string" }, host: { type: "string" }, port: { type: "integer" } }),
  },
  { name: "slow", description: "Wait until cancelled", inputSchema: obj({ tag: { type: "string" } }, ["tag"]) },
  { name: "crash", description: "Exit at once", inputSchema: obj() },
  { name: "picture", description: "Return a tiny picture", inputSchema: obj() },
  { name: "fail", description: "Return an error result", inputSchema: obj() },
  { name: "grow", description: "Add a tool named extra", inputSchema: obj() },
];

function tryConnect(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (what) => {
      socket.destroy();
      resolve(what);
    };
    socket.once("connect", () => done("connected"));
    socket.once("error", (e) => done(`connect failed: ${e.code ?? e.message}`));
    setTimeout(() => done("connect timed out"), 3000).unref();
  });
}

/** A Server with the team tools; `http` adds whoami (reading `headers()`). */
export function createTeamServer({ http = false, headers = () => ({}) } = {}) {
  const server = new Server({ name: "team", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  const tools = [...BASE_TOOLS];
  if (http) tools.push({ name: "whoami", description: "The Authorization header", inputSchema: obj() });
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "echo":
        return text(`team echo: ${args.text}`);
      case "env":
        return text(`names: ${Object.keys(process.env).sort().join(",")}\nTEAM_TOKEN=${process.env.TEAM_TOKEN ?? "(unset)"}`);
      case "probe": {
        const lines = [];
        if (args.path) {
          lines.push(
            await readdir(args.path).then(
              (names) => `read ${args.path}: ${names.join(",") || "(empty)"}`,
              (e) => `read ${args.path} failed: ${e.code}`,
            ),
          );
        }
        if (args.port) lines.push(await tryConnect(args.host ?? "127.0.0.1", args.port));
        return text(lines.join("\n"));
      }
      case "slow": {
        await writeFile(`slow-${args.tag}.started`, "");
        return new Promise((resolve) => {
          const timer = setTimeout(() => resolve(text("slow finished")), 120_000);
          const onAbort = () => {
            clearTimeout(timer);
            void writeFile(`slow-${args.tag}.cancelled`, "").then(() => resolve(text("cancelled")));
          };
          // The started file shows as soon as it is created, so the client may cancel before this
          // line runs: a signal aborted already counts too.
          if (extra.signal.aborted) onAbort();
          else extra.signal.addEventListener("abort", onAbort, { once: true });
        });
      }
      case "crash":
        process.stderr.write("team server: crashing on purpose\n");
        process.exit(3);
        break;
      case "picture":
        return { content: [{ type: "text", text: "a red dot" }, { type: "image", data: PNG, mimeType: "image/png" }] };
      case "fail":
        return { content: [{ type: "text", text: "the tracker refused: quota exceeded" }], isError: true };
      case "grow":
        if (!tools.some((t) => t.name === "extra"))
          tools.push({ name: "extra", description: "Added at run time", inputSchema: obj() });
        await server.sendToolListChanged();
        return text("grown");
      case "extra":
        return text("extra works");
      case "whoami":
        return text(`authorization: ${headers().authorization ?? "(none)"}`);
    }
    return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
  });
  return server;
}
