/**
 * The MCP stdio transport over a process Switchboard started itself (`CommandRunner.start`: in the
 * thread's sandbox, as its account, with the sandbox's environment), instead of the SDK's stdio
 * transport, which spawns the program directly on the host. Messages are JSON lines on
 * stdin/stdout; stderr is the server's log, kept as a short tail to explain a failure.
 */
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { GroupProcess } from "../tools/process-tree.js";

/** Longest line a server may send (a tool result with pictures); longer closes the connection. */
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** The server's last words kept for error messages. */
const STDERR_TAIL = 2000;

/** A transport over `process`'s stdin/stdout. `describeExit()` says how the process ended. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  private stderr = "";
  private exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error } | undefined;
  private closed = false;

  constructor(private readonly process: GroupProcess) {}

  async start(): Promise<void> {
    const child = this.process.child;
    child.stdout?.on("data", (chunk: Buffer) => this.receive(chunk));
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    void this.process.exited.then((exit) => {
      this.exit = exit;
      this.finish();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.process.child.stdin;
    if (this.closed || !stdin || stdin.destroyed)
      throw new Error(`the server is not running (${this.describeExit()})`);
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve, reject) => {
      stdin.write(line, (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    await this.process.stop();
    this.finish();
  }

  /** How the process ended (exit code or signal, and its last stderr lines), or that it runs. */
  describeExit(): string {
    const e = this.exit;
    const how = !e
      ? "still running"
      : e.error
        ? `could not start: ${e.error.message}`
        : e.signal
          ? `killed by ${e.signal}`
          : `exited with code ${e.code}`;
    const said = this.stderr.trim().split("\n").slice(-5).join(" | ");
    return said ? `${how}; it said: ${said}` : how;
  }

  /**
   * Splits stdout into lines: only the new chunk is searched for line ends, and a line's pieces
   * are joined once, so a large message (pictures) costs its size, not its size squared.
   */
  private receive(chunk: Buffer): void {
    let rest = chunk;
    for (let end = rest.indexOf(0x0a); end >= 0; end = rest.indexOf(0x0a)) {
      this.pieces.push(rest.subarray(0, end));
      const line = Buffer.concat(this.pieces).toString("utf8").replace(/\r$/, "");
      this.pieces = [];
      this.pendingBytes = 0;
      rest = rest.subarray(end + 1);
      this.handleLine(line);
    }
    if (rest.length === 0) return;
    this.pieces.push(rest);
    this.pendingBytes += rest.length;
    if (this.pendingBytes > MAX_MESSAGE_BYTES) {
      this.pieces = [];
      this.pendingBytes = 0;
      this.onerror?.(new Error(`the server sent a message over ${MAX_MESSAGE_BYTES} bytes`));
      void this.close();
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      // A server printing its log to stdout: not protocol, not fatal.
      this.stderr = `${this.stderr}\n${line}`.slice(-STDERR_TAIL);
      return;
    }
    this.onmessage?.(message);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
