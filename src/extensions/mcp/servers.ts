/**
 * The configured MCP servers of one process (`McpServers`): which tools each offers to a thread,
 * and calls to them. Local servers run per thread, inside that thread's sandbox, started on the
 * first need (listing tools, a call) and stopped after `idleTimeoutMs` without a call; a remote
 * server has one connection per process. A tool list, once read from any instance, serves every
 * thread until the server says it changed.
 *
 * Failure is contained per server: one that fails to start, times out or crashes is logged once,
 * reported once in each thread that needed it, and tried again after a backoff (1 s doubling to
 * 5 min); meanwhile its tools fail at once with an error result the model can act on, and the other
 * servers and the run go on.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { StructuredLogger } from "../../agent/logger.js";
import type { CommandRunner } from "../tools/sandbox/types.js";
import { modelToolName } from "./names.js";
import { ProcessTransport } from "./process-transport.js";
import { mapCallResult } from "./results.js";
import { McpSession, type McpTool } from "./session.js";
import { type McpToolCatalog, SharedToolLists } from "./shared-tool-lists.js";
import type { McpApproval, McpFailureKind, McpObserver, McpServerSpec } from "./types.js";

export interface McpServersOptions {
  specs: readonly McpServerSpec[];
  /** Tool lists shared with the deployment's other processes; absent: each process lists its own. */
  catalog?: McpToolCatalog;
  /** Prefix of the catalog's keys (the deployment's key prefix). */
  catalogPrefix?: string;
  /** Where local servers run (the tools' sandbox). Absent: local servers cannot start in this process. */
  runner?: CommandRunner;
  /** The thread's workspace on the host, created when missing. */
  workspaceOf(threadKey: string): Promise<string>;
  logger: StructuredLogger;
  observer?: McpObserver;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
}

/** A tool of a server as one thread gets it. */
export interface McpOfferedTool {
  server: string;
  /** The server's own name for it. */
  tool: string;
  /** The name the model sees (`<server>_<tool>`). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Whether a call waits for an admin. */
  ask: boolean;
}

/** Where a server stands, for `/tools` and `switchboard check`. */
export interface McpServerStatus {
  server: string;
  kind: "local" | "remote";
  /**
   * `ready`: its tool list is known; `idle`: not started yet; `failing`: the last try failed;
   * `elsewhere`: a local server of a process that runs no tools (a gateway: workers run it).
   */
  state: "ready" | "idle" | "failing" | "elsewhere";
  tools: McpOfferedTool[];
  /** Why it is failing. */
  problem?: string;
  /** When it is tried again (ms since the epoch). */
  retryAt?: number;
}

interface Failure {
  message: string;
  retryAt: number;
  attempts: number;
  /** Threads already told about this failure. */
  told: Set<string>;
}

/** A thread's own instance of a local server; `busy` counts its calls in flight (no idle stop then). */
interface LocalServer {
  session: Promise<McpSession>;
  idle?: NodeJS.Timeout | undefined;
  busy: number;
}

interface ServerState {
  spec: McpServerSpec;
  tools?: McpTool[];
  /** Whether `tools` came from this process's own session (else from the catalog, refreshed on a start). */
  listedHere: boolean;
  failure?: Failure;
  /** The remote server's connection. */
  remote?: Promise<McpSession>;
  /** Local servers, per thread. */
  local: Map<string, LocalServer>;
}

const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Each tool's schema as offered, one object per listed tool: the validator compiled for it is
 * cached per schema object, so it is compiled once, not once per run. The JSON Schema dialect
 * marker is dropped (the validator reads the schema as draft-07, which MCP's schemas fit).
 */
const schemaOf = new WeakMap<McpTool, Record<string, unknown>>();
function inputSchemaOf(tool: McpTool): Record<string, unknown> {
  let schema = schemaOf.get(tool);
  if (!schema) {
    const { $schema: _dialect, ...rest } = tool.inputSchema as Record<string, unknown>;
    schema = rest;
    schemaOf.set(tool, schema);
  }
  return schema;
}

/** Thrown to the agent (an error tool result); the message is written for the model. */
class McpToolError extends Error {}

export class McpServers {
  private readonly states: ServerState[];
  private readonly now: () => number;
  private readonly shared: SharedToolLists | undefined;
  private closed = false;

  constructor(private readonly o: McpServersOptions) {
    this.states = o.specs.map((spec) => ({ spec, local: new Map(), listedHere: false }));
    this.now = o.now ?? Date.now;
    this.shared = o.catalog ? new SharedToolLists(o.catalog, o.catalogPrefix ?? "", o.logger) : undefined;
  }

  /** The configured servers' names. */
  get names(): string[] {
    return this.states.map((s) => s.spec.name);
  }

  /**
   * The tools `threadKey` (on `platform`) gets now. Servers whose tool list is not known yet are
   * started (local: in this thread's workspace) or connected, in parallel, each within its
   * `startTimeoutMs`; one that fails is left out and reported through `tell` once per thread.
   */
  async toolsFor(
    threadKey: string,
    platform: string,
    tell: (text: string) => Promise<unknown>,
  ): Promise<McpOfferedTool[]> {
    const wanted = this.states.filter((s) => !s.spec.channels || s.spec.channels.includes(platform));
    const lists = await Promise.all(
      wanted.map(async (state) => {
        if (!state.tools) await this.fromCatalog(state);
        if (!state.tools) {
          if (this.waiting(state)) {
            await this.tellOnce(state, threadKey, tell);
            return [];
          }
          let session: McpSession;
          try {
            session = await this.sessionFor(state, threadKey);
          } catch (e) {
            this.failed(state, "start", e);
            await this.tellOnce(state, threadKey, tell);
            return [];
          }
          try {
            this.remember(state, await session.listTools());
            this.recovered(state);
          } catch (e) {
            this.failed(state, "list", e);
            await this.tellOnce(state, threadKey, tell);
            return [];
          }
        }
        return this.offered(state);
      }),
    );
    return lists.flat();
  }

  /**
   * Calls `tool` of `server` for `threadKey` and resolves with the agent's content; rejects with
   * an error written for the model when the server is down, times out, crashes or reports an
   * error, and with the abort when `signal` fires (the server is told to cancel).
   */
  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    threadKey: string,
    signal: AbortSignal | undefined,
    tell: (text: string) => Promise<unknown>,
  ): Promise<ReturnType<typeof mapCallResult>["content"]> {
    const state = this.stateOf(server);
    const spec = state.spec;
    const approval = approvalOf(spec, tool);
    if (approval === "deny" || !this.allowed(spec, tool)) {
      throw new McpToolError(`Tool "${tool}" of MCP server "${server}" is not allowed here.`);
    }
    if (this.waiting(state) && !state.local.has(threadKey) && !state.remote) {
      this.o.observer?.call(server, "unavailable");
      await this.tellOnce(state, threadKey, tell);
      throw new McpToolError(this.unavailableText(state));
    }
    let session: McpSession;
    try {
      session = await untilAborted(this.sessionFor(state, threadKey), signal);
    } catch (e) {
      if (signal?.aborted) {
        this.o.observer?.call(server, "cancelled");
        throw signal.reason instanceof Error ? signal.reason : new Error("The call was stopped.");
      }
      this.failed(state, "start", e);
      this.o.observer?.call(server, "unavailable");
      await this.tellOnce(state, threadKey, tell);
      throw new McpToolError(this.unavailableText(state));
    }
    // Not stopped as idle while a call is in flight, however long it takes.
    const held = state.local.get(threadKey);
    if (held) {
      held.busy++;
      if (held.idle) clearTimeout(held.idle);
      held.idle = undefined;
    }
    try {
      const result = await session.callTool(tool, args, { timeoutMs: spec.callTimeoutMs, signal });
      this.recovered(state);
      const mapped = mapCallResult(result);
      this.o.observer?.call(server, mapped.isError ? "error" : "ok");
      if (mapped.isError) throw new McpToolError(mapped.text || `Tool "${tool}" of "${server}" failed.`);
      return mapped.content;
    } catch (e) {
      if (e instanceof McpToolError) throw e;
      if (signal?.aborted) {
        this.o.observer?.call(server, "cancelled");
        throw signal.reason instanceof Error ? signal.reason : new Error("The call was stopped.");
      }
      if (!session.alive) {
        // This thread's instance (or the connection) died under this call: counted and logged, and
        // the next call starts it afresh. Not a server-wide backoff: the server itself starts, and
        // one thread's call must not make it unavailable to the others.
        void this.drop(state, threadKey, session);
        this.o.observer?.failure(server, "crash");
        this.o.observer?.call(server, "unavailable");
        this.o.logger.warn(
          { err: e, server, tool, exit: session.describeEnd() },
          "MCP server stopped during a call",
        );
        throw new McpToolError(
          `MCP server "${server}" stopped during the call (${session.describeEnd()}). ` +
            "It is started again on the next call; the call may have had effects before it stopped.",
        );
      }
      if (isTimeout(e)) {
        this.o.observer?.call(server, "timeout");
        throw new McpToolError(
          `MCP server "${server}" did not answer "${tool}" within ${Math.round(spec.callTimeoutMs / 1000)} s; the call was cancelled.`,
        );
      }
      this.o.observer?.call(server, "error");
      // A protocol error (unknown tool, bad arguments, an invalid result) leaves the connection as
      // it is; a transport error (HTTP, network) makes a remote connection afresh on the next call.
      if (spec.url && !isProtocolError(e)) void this.drop(state, threadKey, session);
      throw new McpToolError(`MCP server "${server}" failed the call of "${tool}": ${messageOf(e)}`);
    } finally {
      if (held) held.busy--;
      this.touch(state, threadKey);
    }
  }

  /** Where every server stands (for `platform` when given), without starting anything. */
  status(platform?: string): McpServerStatus[] {
    return this.states
      .filter((s) => !platform || !s.spec.channels || s.spec.channels.includes(platform))
      .map((s) => ({
        server: s.spec.name,
        kind: s.spec.url ? "remote" : "local",
        state: s.failure
          ? "failing"
          : s.tools
            ? "ready"
            : !s.spec.url && !this.o.runner
              ? "elsewhere"
              : "idle",
        tools: s.tools ? this.offered(s) : [],
        ...(s.failure ? { problem: s.failure.message, retryAt: s.failure.retryAt } : {}),
      }));
  }

  /** `status`, with tool lists other processes shared for servers this one has not listed (a gateway's `/tools`). */
  async sharedStatus(platform?: string): Promise<McpServerStatus[]> {
    await Promise.all(this.states.filter((s) => !s.tools).map((s) => this.fromCatalog(s)));
    return this.status(platform);
  }

  /**
   * Starts (or connects to) every server once, in `workspace`, and lists its tools: what
   * `switchboard check` shows. Resolves with each server's status; never rejects.
   */
  async probe(threadKey: string): Promise<McpServerStatus[]> {
    await Promise.all(
      this.states.map(async (state) => {
        try {
          const session = await this.sessionFor(state, threadKey);
          this.remember(state, await session.listTools());
          this.recovered(state);
        } catch (e) {
          this.failed(state, "list", e);
        }
      }),
    );
    return this.status();
  }

  /** Stops every local server and closes every connection; no calls after it. */
  async close(): Promise<void> {
    this.closed = true;
    const all: Promise<unknown>[] = [];
    for (const state of this.states) {
      for (const [threadKey] of state.local) all.push(this.drop(state, threadKey));
      if (state.remote) all.push(this.drop(state, ""));
    }
    await Promise.all(all);
  }

  private stateOf(server: string): ServerState {
    const state = this.states.find((s) => s.spec.name === server);
    if (!state) throw new Error(`No MCP server named "${server}" is configured.`);
    return state;
  }

  private allowed(spec: McpServerSpec, tool: string): boolean {
    if (spec.denyTools.includes(tool)) return false;
    return !spec.allowTools || spec.allowTools.includes(tool);
  }

  private offered(state: ServerState): McpOfferedTool[] {
    const spec = state.spec;
    const out: McpOfferedTool[] = [];
    for (const t of state.tools ?? []) {
      if (!this.allowed(spec, t.name)) continue;
      const approval = approvalOf(spec, t.name);
      if (approval === "deny") continue;
      // Without a sandbox a local server sees what the gateway's user sees: only approval guards it.
      const unguarded = !spec.url && this.o.runner?.kind === "none" && !spec.trusted;
      out.push({
        server: spec.name,
        tool: t.name,
        name: modelToolName(spec.name, t.name),
        description:
          [t.title && t.title !== t.name ? t.title : undefined, t.description].filter(Boolean).join(": ") ||
          `Tool "${t.name}" of MCP server "${spec.name}".`,
        inputSchema: inputSchemaOf(t),
        ask: approval === "ask" || unguarded,
      });
    }
    return out;
  }

  /** Keeps `tools` as the server's list, read by this process, and shares it. */
  private remember(state: ServerState, tools: McpTool[]): void {
    state.tools = tools;
    state.listedHere = true;
    this.shared?.write(state.spec, tools);
  }

  /** Takes the list another process shared, if any. */
  private async fromCatalog(state: ServerState): Promise<void> {
    if (!this.shared || state.tools) return;
    const tools = await this.shared.read(state.spec);
    if (tools && !state.tools) state.tools = tools;
  }

  /** The session of `threadKey` (local) or the process's (remote), started or connected when missing. */
  private sessionFor(state: ServerState, threadKey: string): Promise<McpSession> {
    if (this.closed) return Promise.reject(new Error("Switchboard is shutting down."));
    const spec = state.spec;
    if (spec.url) {
      if (!state.remote) {
        const connecting: Promise<McpSession> = this.connectRemote(state, () => state.remote === connecting)
          .then((connected) => this.refreshShared(state, connected))
          .catch((e: unknown) => {
            if (state.remote === connecting) state.remote = undefined;
            throw e;
          });
        state.remote = connecting;
      }
      return state.remote;
    }
    const held = state.local.get(threadKey);
    if (held) return held.session;
    const entry: LocalServer = { session: Promise.resolve() as unknown as Promise<McpSession>, busy: 0 };
    const session = this.startLocal(state, threadKey, entry).then((started) =>
      this.refreshShared(state, started),
    );
    entry.session = session;
    state.local.set(threadKey, entry);
    // The idle clock starts once it runs: a slow start is bounded by startTimeoutMs, not by idleness.
    session.then(
      () => this.touch(state, threadKey),
      () => {
        if (state.local.get(threadKey) === entry) state.local.delete(threadKey);
      },
    );
    return session;
  }

  /**
   * A list taken from the catalog may be older than the server: the first session this process
   * opens reads it again (in the background) and shares what it found.
   */
  private refreshShared(state: ServerState, session: McpSession): McpSession {
    if (state.tools && !state.listedHere) {
      state.listedHere = true;
      session.listTools().then(
        (tools) => this.remember(state, tools),
        (e: unknown) =>
          this.o.logger.warn({ err: e, server: state.spec.name }, "could not list an MCP server's tools"),
      );
    }
    return session;
  }

  private async connectRemote(state: ServerState, stillHeld: () => boolean): Promise<McpSession> {
    const spec = state.spec;
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    const transport = new StreamableHTTPClientTransport(new URL(spec.url as string), {
      requestInit: { headers: { ...spec.headers } },
    });
    return McpSession.connect(transport, {
      timeoutMs: spec.startTimeoutMs,
      onToolsChanged: (tools) => this.remember(state, tools),
      onClose: () => {
        // The connection is remade on the next call (a newer one may already be held).
        if (stillHeld()) state.remote = undefined;
      },
    });
  }

  private async startLocal(state: ServerState, threadKey: string, entry: LocalServer): Promise<McpSession> {
    const spec = state.spec;
    const runner = this.o.runner;
    if (!runner) throw new Error("local MCP servers run on the workers, not in this process");
    const workspace = await this.o.workspaceOf(threadKey);
    const process = runner.start(spec.command ?? [], { workspace, network: spec.network, env: spec.env });
    const transport = new ProcessTransport(process);
    try {
      return await McpSession.connect(transport, {
        timeoutMs: spec.startTimeoutMs,
        describeEnd: () => transport.describeExit(),
        onToolsChanged: (tools) => this.remember(state, tools),
        // Only this instance's own entry: a newer one of the same thread may hold the key by now.
        onClose: () => {
          if (entry.idle) clearTimeout(entry.idle);
          if (state.local.get(threadKey) === entry) state.local.delete(threadKey);
        },
      });
    } catch (e) {
      await process.stop();
      const ended = transport.describeExit();
      throw new Error(ended === "still running" ? messageOf(e) : `${messageOf(e)} (${ended})`);
    }
  }

  /** Re-arms the idle stop of `threadKey`'s local server (when no call is in flight). */
  private touch(state: ServerState, threadKey: string): void {
    const held = state.local.get(threadKey);
    if (!held || held.busy > 0) return;
    if (held.idle) clearTimeout(held.idle);
    held.idle = setTimeout(() => void this.drop(state, threadKey), state.spec.idleTimeoutMs);
    held.idle.unref();
  }

  /**
   * Closes the remote connection or `threadKey`'s local instance; with `only`, just when that is
   * still the session held (a newer one, opened meanwhile, stays).
   */
  private async drop(state: ServerState, threadKey: string, only?: McpSession): Promise<void> {
    if (state.spec.url) {
      const remote = state.remote;
      if (!remote || (only && (await remote.catch(() => undefined)) !== only)) return;
      if (state.remote === remote) state.remote = undefined;
      await remote.then((s) => s.close()).catch(() => undefined);
      return;
    }
    const held = state.local.get(threadKey);
    if (!held || (only && (await held.session.catch(() => undefined)) !== only)) return;
    if (state.local.get(threadKey) === held) state.local.delete(threadKey);
    if (held.idle) clearTimeout(held.idle);
    await held.session.then((s) => s.close()).catch(() => undefined);
  }

  private waiting(state: ServerState): boolean {
    return state.failure !== undefined && this.now() < state.failure.retryAt;
  }

  private failed(state: ServerState, kind: McpFailureKind, error: unknown): void {
    // Threads that failed to start it at the same moment count as one attempt.
    if (this.waiting(state)) return;
    const attempts = (state.failure?.attempts ?? 0) + 1;
    const delay = Math.min(1000 * 2 ** (attempts - 1), MAX_BACKOFF_MS);
    const message = messageOf(error);
    state.failure = {
      message,
      retryAt: this.now() + delay,
      attempts,
      told: state.failure?.told ?? new Set(),
    };
    this.o.observer?.failure(state.spec.name, kind);
    this.o.logger.warn(
      { err: error, server: state.spec.name, kind, attempts, retryInMs: delay },
      "MCP server unavailable",
    );
  }

  private recovered(state: ServerState): void {
    if (!state.failure) return;
    this.o.logger.info({ server: state.spec.name }, "MCP server available again");
    state.failure = undefined;
  }

  private async tellOnce(state: ServerState, threadKey: string, tell: (text: string) => Promise<unknown>) {
    const failure = state.failure;
    if (!failure || failure.told.has(threadKey)) return;
    failure.told.add(threadKey);
    await tell(
      `⚠️ MCP server "${state.spec.name}" is unavailable: ${failure.message}. ` +
        `The agent goes on without its tools; Switchboard tries it again in ${this.retryIn(state)}.`,
    ).catch((e: unknown) =>
      this.o.logger.warn({ err: e, server: state.spec.name }, "could not report an MCP failure"),
    );
  }

  private unavailableText(state: ServerState): string {
    return (
      `MCP server "${state.spec.name}" is unavailable (${state.failure?.message ?? "not started"}); ` +
      `it is tried again in ${this.retryIn(state)}. Do without it or tell the user.`
    );
  }

  private retryIn(state: ServerState): string {
    const ms = Math.max(0, (state.failure?.retryAt ?? this.now()) - this.now());
    return ms < 60_000 ? `${Math.ceil(ms / 1000)} s` : `${Math.ceil(ms / 60_000)} min`;
  }
}

/** What `tool` of `spec` may do: its own setting, the server's, or the trust default. */
function approvalOf(spec: McpServerSpec, tool: string): McpApproval {
  return spec.toolApproval[tool] ?? spec.approval ?? (spec.trusted ? "allow" : "ask");
}

/** `promise`, or the abort of `signal` when it fires first (the promise still settles on its own). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** A JSON-RPC error the server answered with (the connection itself is fine). */
function isProtocolError(e: unknown): boolean {
  return e instanceof McpError;
}

function isTimeout(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { code?: unknown }).code === -32001;
}

function messageOf(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    const why = cause instanceof Error && !e.message.includes(cause.message) ? ` (${cause.message})` : "";
    // The SDK's HTTP errors carry the status as `code` but not always in the message.
    const code = (e as { code?: unknown }).code;
    const status = typeof code === "number" && code >= 400 && code < 600 ? ` (HTTP ${code})` : "";
    return `${e.message}${why}${status}`.replace(/^MCP error -?\d+: /, "");
  }
  return String(e);
}
