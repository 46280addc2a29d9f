/**
 * A tenure's view of its thread's session and agent: builds (or reuses) the cached agent from the
 * stored session and binds it to the tenure (the run driver's hooks in front of the factory's, its
 * event handler subscribed), and appends entries after the current leaf, one at a time, in event
 * order, fenced by the lease token. What it may write follows the tenure: nothing new once the
 * tenure's work must stop, not even what was queued once the lease is lost or a write failed (the
 * next holder continues from what is stored).
 */
import type { InboundMessage } from "../../adapters/types.js";
import type { Model, ThinkingLevel } from "../../agent/llm/types.js";
import { THINKING_LEVELS } from "../../agent/llm/types.js";
import { estimateContextTokens } from "../../agent/session/compaction/tokens.js";
import { branchContext } from "../../agent/session/context.js";
import { newEntryId } from "../../agent/session/entries.js";
import { recordSettings } from "../../agent/session/settings.js";
import type { SessionEntry, SessionEntryInput } from "../../agent/session/types.js";
import { LeaseLostError } from "../store/errors.js";
import type { BranchRead, Fence, ThreadMeta } from "../store/types.js";
import type { RenderLog, ThreadAgent } from "../types.js";
import type { AgentBinding, AgentDriver, CachedAgent } from "./agent-cache.js";
import type { HolderEnv } from "./holder-env.js";
import { emitSessionEvent } from "./session-events.js";
import type { Tenure } from "./tenure.js";

function modelRef(model: Model): string {
  return `${model.provider}/${model.id}`;
}

function asThinkingLevel(v: string | undefined): ThinkingLevel | undefined {
  return THINKING_LEVELS.find((l) => l === v);
}

export class ThreadSession implements AgentDriver {
  entry: CachedAgent | undefined;
  private chain: Promise<void> = Promise.resolve();
  private binding: AgentBinding | undefined;
  /**
   * The thread meta as read once in this tenure (after the lease was taken), tagged with the
   * control version it is known to be fresh for: it was read after a control read that saw `ver`,
   * and the gateway writes the meta before it bumps `ver`. Dropped when this tenure writes to the
   * session (its leaf, current session or recorded model move), so a read after that is fresh.
   */
  private meta: { value: ThreadMeta | undefined; ver: number } | undefined;

  constructor(
    private readonly tenure: Tenure,
    private readonly env: HolderEnv,
  ) {
    // The work must stop: abort the agent, unless a newer tenure in this process drives it now.
    tenure.stopSignal.addEventListener(
      "abort",
      () => {
        const entry = this.entry;
        if (entry && entry.driver === this) entry.agent.abort();
      },
      { once: true },
    );
  }

  private get threadKey(): string {
    return this.tenure.threadKey;
  }

  /** What this tenure plugs into the agent (set once, before the first `ensureAgent`). */
  bind(binding: AgentBinding): void {
    this.binding = binding;
  }

  /** The lease fence every session write of this tenure carries. */
  fence(): Fence {
    return { key: this.env.fenceKey(this.threadKey), token: this.tenure.token };
  }

  /** Resolves when every queued write is done. */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Whether entries queued now would be written. */
  get writing(): boolean {
    return !this.tenure.stopSignal.aborted;
  }

  /**
   * The thread's agent: the cached one if its history still ends at the session's leaf, else a new
   * one from the stored session (creating the first session with the thread's settings). Either
   * way it is bound to this tenure.
   */
  async ensureAgent(o: { switchedFrom?: string } = {}): Promise<CachedAgent> {
    const { store, cache, factory } = this.env;
    // Queued writes first: one in flight moves the stored leaf before the cached one, and the
    // agent would be rebuilt (and its settings written a second time, beside the first).
    await this.flush();
    const cached = cache.get(this.threadKey);
    // This tenure's own agent is in step with the session: only this holder writes, every write
    // moves the agent's leaf with it, and `/new` forgets the agent. No meta read is needed.
    if (cached && cached === this.entry && !cached.agent.state.isStreaming) {
      this.attach(cached);
      return cached;
    }
    const meta = await this.threadMeta();
    if (
      cached &&
      meta &&
      cached.sessionId === meta.currentSessionId &&
      cached.leafId === meta.leafId &&
      !cached.agent.state.isStreaming
    ) {
      // An agent a previous tenure in this process parked: the settings may have changed since.
      this.attach(cached);
      this.applySettings(meta);
      return cached;
    }
    if (cached) cache.drop(this.threadKey);
    // No current session in the meta read under this lease: none to read (only a holder creates one).
    const stored = meta?.currentSessionId
      ? await store.readBranch(this.threadKey, meta.currentSessionId)
      : undefined;
    const ctx = branchContext(stored ?? { entries: [], leafId: null });
    const recordedModel = ctx.model ? `${ctx.model.provider}/${ctx.model.modelId}` : undefined;
    const controller = new AbortController();
    let entry: CachedAgent | undefined;
    const threadKey = this.threadKey;
    const built = await factory({
      threadKey,
      meta,
      messages: ctx.messages,
      model: meta?.model ?? recordedModel,
      thinkingLevel: asThinkingLevel(meta?.thinkingLevel ?? ctx.thinkingLevel),
      signal: controller.signal,
      // The cached agent outlives this tenure: these go to whichever tenure drives it when called.
      appendEntry: (customType, data) => {
        const driver = entry?.driver;
        if (!driver)
          return Promise.reject(
            new Error(
              `No run holds thread ${threadKey} in this process now; the ${customType} entry was not written.`,
            ),
          );
        return driver.appendEntry(customType, data);
      },
      currentInbound: () => entry?.driver?.currentInbound() ?? [],
      renderLog: (id) => entry?.driver?.renderLog(id),
    });
    const threadAgent: ThreadAgent = "agent" in built ? built : { agent: built };
    const agent = threadAgent.agent;
    if (
      typeof agent?.prompt !== "function" ||
      typeof agent.subscribe !== "function" ||
      typeof agent.addHooks !== "function"
    )
      throw new Error(
        `The agent factory returned no Agent for ${this.threadKey}: return an Agent or { agent, prepareRun?, onSessionEvent? }.`,
      );
    const branch = stored ?? (await this.startSession(agent, ctx.thinkingLevel));
    entry = {
      threadKey,
      agent,
      sessionId: branch.header.id,
      leafId: branch.leafId,
      recordedModel: stored ? recordedModel : modelRef(agent.state.model),
      recordedThinking: stored ? ctx.thinkingLevel : agent.state.thinkingLevel,
      driver: undefined,
      detach: undefined,
      controller,
    };
    if (threadAgent.prepareRun) entry.prepareRun = threadAgent.prepareRun;
    if (threadAgent.onSessionEvent) entry.onSessionEvent = threadAgent.onSessionEvent;
    cache.set(entry);
    this.attach(entry);
    this.recordSettings();
    await emitSessionEvent(
      entry.onSessionEvent,
      o.switchedFrom !== undefined
        ? {
            type: "session_switch",
            reason: "new",
            previousSessionId: o.switchedFrom,
            sessionId: entry.sessionId,
          }
        : { type: "session_start", sessionId: entry.sessionId },
      this.env.onError,
    );
    return entry;
  }

  /**
   * Creates the thread's first session once its agent is built, with the settings the agent runs
   * at as its first entries (what `recordSettings` would append next, clamp included), so a new
   * thread's session is written by one script rather than a create and an append.
   */
  private async startSession(agent: ThreadAgent["agent"], emptyThinking: string): Promise<BranchRead> {
    this.meta = undefined;
    const r = recordSettings(
      { model: undefined, thinkingLevel: emptyThinking },
      agent.state.model,
      agent.state.thinkingLevel,
    );
    if (r.level !== agent.state.thinkingLevel) agent.setThinkingLevel(r.level);
    const has = (type: string): boolean => r.entries.some((e) => e.type === type);
    return this.env.store.startSession(this.threadKey, {
      model: has("model_change") ? modelRef(agent.state.model) : undefined,
      thinkingLevel: has("thinking_level_change") ? r.level : undefined,
      fence: this.fence(),
    });
  }

  /** Makes `entry` this tenure's agent: its hooks and event handler go onto the agent. */
  private attach(entry: CachedAgent): void {
    this.entry = entry;
    if (entry.driver === this) return;
    const binding = this.binding;
    if (!binding) throw new Error("ThreadSession.bind() must be called before the agent is used.");
    entry.detach?.();
    const removeHooks = entry.agent.addHooks(binding.hooks, { position: "first" });
    const unsubscribe = entry.agent.subscribe((event) => binding.onEvent(event));
    entry.driver = this;
    entry.detach = () => {
      removeHooks();
      unsubscribe();
      if (entry.driver === this) entry.driver = undefined;
      entry.detach = undefined;
    };
  }

  /** Forgets the agent (it may be ahead of the session), unless a newer tenure took it. */
  forgetAgent(): void {
    const entry = this.entry;
    this.entry = undefined;
    if (!entry || entry.driver !== this) return;
    this.env.cache.drop(this.threadKey, entry);
  }

  /** Keeps the agent cached for the next tenure in this process. */
  parkAgent(): void {
    const entry = this.entry;
    if (!entry || entry.driver !== this) return;
    this.env.cache.idle(entry);
  }

  /** Appends one entry after the current leaf, fenced by the lease, in order with every other write. */
  persist(input: SessionEntryInput, id?: string, after?: () => void): void {
    void this.write(input, { id, after });
  }

  /**
   * Like `persist`, resolving with the entry as stored, or undefined when it was not written (the
   * work was stopped, the lease is gone, or the store failed: the tenure was told). `parentId`
   * attaches the entry elsewhere than the current leaf (a compaction that leaves a failed reply off
   * the branch); the leaf moves to the new entry either way.
   */
  write(
    input: SessionEntryInput,
    options: { id?: string | undefined; parentId?: string | null; after?: (() => void) | undefined } = {},
  ): Promise<SessionEntry | undefined> {
    if (!this.writing) return Promise.resolve(undefined);
    const step = this.chain.then(async (): Promise<SessionEntry | undefined> => {
      const entry = this.entry;
      // Failed: a write failed, so where the leaf is is not known. Lost is no reason to skip: the
      // tenure may count its lease lost (renewals unanswered for ⅔ of the TTL, as in a Redis
      // failover) while the lease still stands, and an answer already shown must then be saved, or
      // the next holder answers the message again. The fence decides.
      if (!entry || this.tenure.state === "failed") return undefined;
      const full = {
        ...input,
        id: options.id ?? newEntryId(),
        parentId: options.parentId !== undefined ? options.parentId : entry.leafId,
        timestamp: new Date(this.env.clock.now()).toISOString(),
      } as SessionEntry;
      try {
        const r = await this.env.store.append(this.threadKey, entry.sessionId, [full], {
          fence: this.fence(),
        });
        entry.leafId = r.leafId;
        this.meta = undefined;
        const stored = r.entries[r.entries.length - 1] ?? full;
        options.after?.();
        return stored;
      } catch (e) {
        if (e instanceof LeaseLostError) this.tenure.lose();
        else this.tenure.fail(e, `saving a session entry of ${this.threadKey}`);
        return undefined;
      }
    });
    this.chain = step.then(() => undefined);
    return step;
  }

  /**
   * Session writes queued from now on wait for `write` (a fenced write beside the session, e.g. the
   * render journal's, already under way): what it records is stored before anything the session
   * is asked to save later. `write` must not reject.
   */
  barrier(write: Promise<void>): void {
    this.chain = this.chain.then(() => write);
  }

  /** `AgentDriver`: a `custom` entry for the factory's `appendEntry`. */
  appendEntry(customType: string, data: unknown): Promise<void> {
    return this.appendCustom(customType, data);
  }

  /** `AgentDriver`: the chat messages the current run answers. */
  currentInbound(): InboundMessage[] {
    return this.binding?.currentInbound() ?? [];
  }

  /** `AgentDriver`: the render-journal log of message `id`, fenced by this tenure's lease. */
  renderLog(id: string): RenderLog | undefined {
    return this.binding?.renderLog(id);
  }

  /**
   * A `custom` entry (never sent to the model) after the entries queued so far, fenced. Rejects,
   * having written nothing, when this tenure no longer writes (lease lost, handed over).
   */
  async appendCustom(customType: string, data: unknown): Promise<void> {
    const stored = await this.write(
      data === undefined ? { type: "custom", customType } : { type: "custom", customType, data },
    );
    if (!stored)
      throw new Error(
        `The ${customType} entry was not written: this worker no longer holds thread ${this.threadKey}.`,
      );
  }

  /**
   * The thread meta, read at most once per tenure: the copy read earlier is returned while it is
   * fresh for control version `ver` (default: any) and this tenure has not written to the session
   * since; otherwise it is read now (and kept, fresh for `ver`).
   */
  async threadMeta(ver?: number): Promise<ThreadMeta | undefined> {
    const m = this.meta;
    if (m && (ver === undefined || m.ver >= ver)) return m.value;
    const value = await this.env.store.getThreadMeta(this.threadKey);
    this.meta = { value, ver: ver ?? -1 };
    return value;
  }

  /** Forgets the meta read earlier: a command changed it (a new session). */
  forgetMeta(): void {
    this.meta = undefined;
  }

  /**
   * The thread's control version `ver` was seen: applies its stored settings (`/model`,
   * `/thinking`) to the agent, from its next LLM call, and records the changes in the session. The
   * meta is read only when the copy this tenure holds may predate `ver`. An unknown model is
   * reported and ignored. Without an agent yet, the meta is only read (the agent is built from it).
   */
  async applyStoredSettings(ver?: number): Promise<void> {
    const meta = await this.threadMeta(ver);
    if (this.entry) this.applySettings(meta);
  }

  private applySettings(meta: ThreadMeta | undefined): void {
    const entry = this.entry;
    if (!entry) return;
    const agent = entry.agent;
    if (meta?.model && meta.model !== modelRef(agent.state.model)) {
      const model = this.env.resolveModel(meta.model);
      if (model) agent.setModel(model);
      else
        this.env.onError(
          new Error(`Unknown model "${meta.model}"; keeping ${modelRef(agent.state.model)}.`),
          "changing the model",
        );
    }
    const level = asThinkingLevel(meta?.thinkingLevel);
    if (level && level !== agent.state.thinkingLevel) agent.setThinkingLevel(level);
    this.recordSettings();
  }

  /**
   * Records the agent's model and thinking level in the session when they differ from the last
   * recorded ones, clamping the level to the model first (`recordSettings`), so a clamp is written
   * as pi writes it, and each change once.
   */
  recordSettings(): void {
    const entry = this.entry;
    if (!entry) return;
    const { model, thinkingLevel } = entry.agent.state;
    const r = recordSettings(
      { model: entry.recordedModel, thinkingLevel: entry.recordedThinking },
      model,
      thinkingLevel,
    );
    if (r.level !== thinkingLevel) entry.agent.setThinkingLevel(r.level);
    entry.recordedModel = r.recorded.model;
    entry.recordedThinking = r.recorded.thinkingLevel;
    for (const input of r.entries) this.persist(input);
  }

  /** The agent's context estimate in tokens (for `status`), or undefined without an agent. */
  contextTokens(): number | undefined {
    const entry = this.entry;
    return entry ? estimateContextTokens(entry.agent.state.messages).tokens : undefined;
  }

  /** Records the agent's context estimate for `status` (best effort). */
  recordContextTokens(): void {
    const tokens = this.contextTokens();
    if (tokens === undefined) return;
    this.env.state
      .setContextTokens(this.threadKey, tokens)
      .catch((e: unknown) => this.env.onError(e, "recording the context size"));
  }
}
