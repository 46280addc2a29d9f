/**
 * A holder's view of its thread's session and agent: builds (or reuses) the cached agent from the
 * stored session, and appends entries after the current leaf, one at a time, in event order,
 * fenced by the lease token.
 */
import type { Model, ThinkingLevel } from "../../agent/llm/types.js";
import { THINKING_LEVELS } from "../../agent/llm/types.js";
import { branchContext } from "../../agent/session/context.js";
import { newEntryId } from "../../agent/session/entries.js";
import { recordSettings } from "../../agent/session/settings.js";
import type { SessionEntry, SessionEntryInput } from "../../agent/session/types.js";
import { LeaseLostError } from "../store/errors.js";
import type { Fence, SessionStore } from "../store/types.js";
import type { AgentFactory, ModelResolver, ThreadAgent } from "../types.js";
import type { AgentBinding, AgentCache, CachedAgent } from "./agent-cache.js";
import { ensureTransformContext, type TransformContextFn } from "./agent-hooks.js";
import { emitSessionEvent } from "./session-events.js";

export function modelRef(model: Model): string {
  return `${model.provider}/${model.id}`;
}

export function asThinkingLevel(v: string | undefined): ThinkingLevel | undefined {
  return THINKING_LEVELS.find((l) => l === v);
}

export interface ThreadSessionEnv {
  store: SessionStore;
  cache: AgentCache;
  factory: AgentFactory;
  fenceKey: (threadKey: string) => string;
  onError: (error: unknown, context: string) => void;
}

export interface ThreadSessionHooks {
  /** Where the agent's queue sources and events go while this holder drives it. */
  binding: AgentBinding;
  /** An append failed the fence: the lease is gone. */
  onLost(): void;
  /** An append failed for another reason: the tenure cannot go on safely. */
  onFailed(): void;
}

export class ThreadSession {
  entry: CachedAgent | undefined;
  private chain: Promise<void> = Promise.resolve();
  private writesOff = false;
  private lost = false;

  constructor(
    private readonly threadKey: string,
    private readonly token: string,
    private readonly env: ThreadSessionEnv,
    private readonly hooks: ThreadSessionHooks,
  ) {}

  /** The lease fence every session write of this tenure carries. */
  fence(): Fence {
    return { key: this.env.fenceKey(this.threadKey), token: this.token };
  }

  /** No entry queued from now on is written (entries queued before still are). */
  stopWriting(): void {
    this.writesOff = true;
  }

  /** The lease is gone: skip even the queued writes (the fence would refuse them). */
  markLost(): void {
    this.writesOff = true;
    this.lost = true;
  }

  /** Resolves when every queued write is done. */
  flush(): Promise<void> {
    return this.chain;
  }

  /**
   * The thread's agent: the cached one if its history still ends at the session's leaf, else a new
   * one from the stored session (creating the first session with the thread's settings).
   */
  async ensureAgent(o: { switchedFrom?: string } = {}): Promise<CachedAgent> {
    const { store, cache, factory } = this.env;
    // Queued writes first: one in flight moves the stored leaf before the cached one, and the
    // agent would be rebuilt (and its settings written a second time, beside the first).
    await this.flush();
    const meta = await store.getThreadMeta(this.threadKey);
    const cached = cache.get(this.threadKey);
    // This tenure's own agent is in step with the session whatever the leaf read says: only this
    // holder writes, and every write moves the agent's leaf with it.
    const own = cached !== undefined && cached === this.entry;
    if (
      cached &&
      meta &&
      cached.sessionId === meta.currentSessionId &&
      (own || cached.leafId === meta.leafId) &&
      !cached.agent.state.isStreaming
    ) {
      cached.binding = this.hooks.binding;
      this.entry = cached;
      return cached;
    }
    if (cached) cache.drop(this.threadKey);
    let branch = await store.readBranch(this.threadKey);
    if (!branch) {
      await store.createSession(this.threadKey, {
        model: meta?.model,
        thinkingLevel: meta?.thinkingLevel,
        fence: this.fence(),
      });
      branch = await store.readBranch(this.threadKey);
      if (!branch)
        throw new Error(`The store created a session for ${this.threadKey} but cannot read it back.`);
    }
    const ctx = branchContext(branch);
    const recordedModel = ctx.model ? `${ctx.model.provider}/${ctx.model.modelId}` : undefined;
    const controller = new AbortController();
    let entry: CachedAgent | undefined;
    const transformContext: TransformContextFn = (messages, signal) =>
      entry?.binding?.transformContext?.(messages, signal) ?? Promise.resolve(messages);
    const built = await factory({
      threadKey: this.threadKey,
      meta,
      messages: ctx.messages,
      model: meta?.model ?? recordedModel,
      thinkingLevel: asThinkingLevel(meta?.thinkingLevel ?? ctx.thinkingLevel),
      signal: controller.signal,
      getSteeringMessages: () => entry?.binding?.getSteeringMessages() ?? Promise.resolve([]),
      getFollowUpMessages: () => entry?.binding?.getFollowUpMessages() ?? Promise.resolve([]),
      transformContext,
      appendEntry: (customType, data) => {
        const append = entry?.binding?.appendEntry;
        if (!append)
          return Promise.reject(
            new Error(
              `No run holds thread ${this.threadKey} in this process now; the ${customType} entry was not written.`,
            ),
          );
        return append(customType, data);
      },
      currentInbound: () => entry?.binding?.currentInbound?.() ?? [],
    });
    const threadAgent: ThreadAgent = "agent" in built ? built : { agent: built };
    const agent = threadAgent.agent;
    if (typeof agent?.prompt !== "function" || typeof agent.subscribe !== "function")
      throw new Error(
        `The agent factory returned no Agent for ${this.threadKey}: return an Agent or { agent, prepareRun?, onSessionEvent? }.`,
      );
    if (ensureTransformContext(agent, transformContext) === "unavailable")
      this.env.onError(
        new Error(
          "The agent from the factory has no hook for per-call compaction; compacting after runs only.",
        ),
        `building the agent of ${this.threadKey}`,
      );
    entry = {
      threadKey: this.threadKey,
      agent,
      sessionId: branch.header.id,
      leafId: branch.leafId,
      recordedModel,
      recordedThinking: ctx.thinkingLevel,
      binding: this.hooks.binding,
      controller,
      unsubscribe: () => {},
    };
    if (threadAgent.prepareRun) entry.prepareRun = threadAgent.prepareRun;
    if (threadAgent.onSessionEvent) entry.onSessionEvent = threadAgent.onSessionEvent;
    const bound = entry;
    entry.unsubscribe = agent.subscribe((event) => bound.binding?.onEvent(event));
    cache.set(entry);
    this.entry = entry;
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

  /** Forgets the agent (it may be ahead of the session), unless a newer holder replaced it. */
  forgetAgent(): void {
    const entry = this.entry;
    this.entry = undefined;
    if (!entry || entry.binding !== this.hooks.binding) return;
    this.env.cache.drop(this.threadKey, entry);
  }

  /** Keeps the agent cached for the next tenure in this process. */
  parkAgent(): void {
    const entry = this.entry;
    if (!entry || entry.binding !== this.hooks.binding) return;
    this.env.cache.idle(entry);
  }

  /** Appends one entry after the current leaf, fenced by the lease, in order with every other write. */
  persist(input: SessionEntryInput, id?: string, after?: () => void): void {
    void this.write(input, { id, after });
  }

  /**
   * Like `persist`, resolving with the entry as stored, or undefined when it was not written (writes
   * are off, the lease is gone, or the store failed: the hooks were told). `parentId` attaches the
   * entry elsewhere than the current leaf (a compaction that leaves a failed reply off the branch);
   * the leaf moves to the new entry either way.
   */
  write(
    input: SessionEntryInput,
    options: { id?: string | undefined; parentId?: string | null; after?: (() => void) | undefined } = {},
  ): Promise<SessionEntry | undefined> {
    if (this.writesOff) return Promise.resolve(undefined);
    const step = this.chain.then(async (): Promise<SessionEntry | undefined> => {
      const entry = this.entry;
      if (!entry || this.lost) return undefined;
      const full = {
        ...input,
        id: options.id ?? newEntryId(),
        parentId: options.parentId !== undefined ? options.parentId : entry.leafId,
        timestamp: new Date().toISOString(),
      } as SessionEntry;
      try {
        const r = await this.env.store.append(this.threadKey, entry.sessionId, [full], {
          fence: this.fence(),
        });
        entry.leafId = r.leafId;
        const stored = r.entries[r.entries.length - 1] ?? full;
        options.after?.();
        return stored;
      } catch (e) {
        if (e instanceof LeaseLostError) this.hooks.onLost();
        else {
          this.env.onError(e, `saving a session entry of ${this.threadKey}`);
          this.hooks.onFailed();
        }
        return undefined;
      }
    });
    this.chain = step.then(() => undefined);
    return step;
  }

  /** Whether entries queued now would be written. */
  get writing(): boolean {
    return !this.writesOff;
  }

  /**
   * A `custom` entry (never sent to the model) after the entries queued so far, fenced. Rejects,
   * having written nothing, when this holder no longer writes (lease lost, handed over).
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
   * Applies the thread's stored settings (`/model`, `/thinking`) to the agent, from its next LLM
   * call, and records the changes in the session. An unknown model is reported and ignored.
   */
  async applyStoredSettings(resolveModel: ModelResolver): Promise<void> {
    const entry = this.entry;
    if (!entry) return;
    const meta = await this.env.store.getThreadMeta(this.threadKey);
    const agent = entry.agent;
    if (meta?.model && meta.model !== modelRef(agent.state.model)) {
      const model = resolveModel(meta.model);
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
}
