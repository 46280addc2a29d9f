/**
 * The budget gate in front of every model call: before a call it reserves the call's worst case
 * (the prompt's estimated tokens plus `maxTokens`, priced at the model's rates) against every cap
 * of who the call is for; a call over a cap is not made, and fails as data (`stopReason: "error"`)
 * with a message naming the cap, its reset and who can lift it. When the stream ends the gate
 * settles the reservation to the actual usage and posts the one-time warning of a cap that passed
 * `warnAt`. Where the platform has admins, a run over a cap first asks them: an admin's ✅ (or
 * `/approve <id>`) lets that one run go on past the caps.
 *
 * Admission: a call is let in while no cap it counts against is reached (spent + live reservations
 * below the limit); a call refused only because other calls' reservations fill the cap waits for
 * them to settle, since worst cases are far above what calls really cost. Total spending passes a
 * cap by at most about one call.
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../../../agent/clock.js";
import { failedStream } from "../../../agent/llm/failed-stream.js";
import type { AssistantMessage, Context, Model, SimpleStreamOptions } from "../../../agent/llm/types.js";
import { estimateTokens } from "../../../agent/session/compaction/index.js";
import type { StreamFn } from "../../../agent/types.js";
import type { ApprovalStore } from "../../../extensions/approval/types.js";
import type { ThreadUser } from "../../../extensions/types.js";
import { type BudgetParty, type BudgetPolicy, capsFor, limits } from "../../../queue/budgets/policy.js";
import type { Amount, BudgetCap, BudgetLedger, ReserveOutcome } from "../../../queue/budgets/types.js";
import type { Logger } from "../../log.js";
import { askDecidedText, askText, type CapState, refusalText, shareUsed, warningText } from "./texts.js";

/** Where a thread's budget notices go (the thread host's post, edit and react). */
export interface BudgetChat {
  post(text: string): Promise<string>;
  react(ref: string, emoji: string): Promise<void>;
  /**
   * Posts the admin request `id` as a message that ends as `ifStopped` should this worker die
   * waiting (the render journal finishes it; where there is none it is posted plainly), and
   * resolves with its reference and how to give it its final text.
   */
  postRequest(
    id: string,
    text: string,
    ifStopped: string,
  ): Promise<{ ref: string; finish(text: string): Promise<void> }>;
}

/** Who a call is for, and where to tell them. */
export interface BudgetCaller extends BudgetParty {
  platform: string;
  /** The person the run answers (the admin request names them). */
  user?: ThreadUser;
  /** Absent: nothing is posted and no admin is asked (the refusal is the call's error alone). */
  chat?: BudgetChat;
}

/** What the gate counts for operators (`switchboard_budget_*`). */
export interface BudgetMetrics {
  budgetRefused(cap: BudgetCap): void;
  budgetReserved(cap: BudgetCap, usd: number): void;
  budgetSettled(cap: BudgetCap, usd: number): void;
  budgetOverride(): void;
}

export interface BudgetGateOptions {
  ledger: BudgetLedger;
  policy: BudgetPolicy;
  /** The ledger's zone, for the reset times people read. */
  timeZone: string;
  /** Share of a cap at which the one-time warning is posted; 0: never. */
  warnAt: number;
  /**
   * The lease of a reservation; also how long a call waits for other calls' reservations after it
   * last saw them change.
   */
  reservationTtlMs: number;
  /** How long a run over a cap waits for an admin; 0: no admin is asked. */
  approvalTimeoutMs: number;
  /** Where admin requests live (the tool approvals' store: the same ✅ and `/approve` decide them). */
  approvals: ApprovalStore | undefined;
  hasAdmins(platform: string): boolean;
  clock: Clock;
  metrics?: BudgetMetrics;
  logger: Logger;
}

/** How often a call held back by other calls' reservations looks again. */
const RESERVED_POLL_MS = 250;
/** Waits before each retry of a settle the ledger failed (about a minute in all). */
const SETTLE_RETRIES_MS = [1000, 4000, 15_000, 40_000];

/** The gate (see the file header). */
export class BudgetGate {
  /**
   * Runs an admin allowed past the caps, by the run's abort signal, with whose calls the approval
   * covers (the asker it was given for: a run also takes other people's follow-ups).
   */
  private readonly allowedRuns = new WeakMap<AbortSignal, string | undefined>();

  constructor(private readonly o: BudgetGateOptions) {}

  /** `call` behind the gate, for the calls of `caller()` (read at each call: a run's asker changes). */
  wrap(call: StreamFn, caller: () => BudgetCaller): StreamFn {
    return async (model, context, options) => {
      const who = caller();
      const caps = capsFor(this.o.policy, who);
      const callId = randomUUID();
      const amount = worstCase(model, context, options);
      let admitted: Admission;
      try {
        admitted = await this.admit(who, caps, callId, amount, options?.signal);
      } catch (e) {
        if (options?.signal?.aborted) return failedStream(model, "The run was stopped.", "aborted");
        // The detail (hosts, ports, API errors) goes to the log, not into the chat.
        this.o.logger.error({ err: e, threadKey: who.threadKey }, "budget check failed; call not made");
        return failedStream(
          model,
          "Could not check the budget, so the model was not called. Try again in a moment; if it keeps happening, an operator finds the cause in the log.",
        );
      }
      if (options?.signal?.aborted) {
        if (admitted.ok) await this.o.ledger.release(callId).catch(() => {});
        return failedStream(model, "The run was stopped.", "aborted");
      }
      if (!admitted.ok) {
        const { timeZone } = this.o;
        return failedStream(
          model,
          refusalText(admitted, this.o.clock.now(), timeZone, this.o.hasAdmins(who.platform)),
        );
      }
      const at = admitted.at;
      let source: Awaited<ReturnType<StreamFn>>;
      try {
        source = await call(model, context, options);
      } catch (e) {
        await this.o.ledger.release(callId).catch(() => {});
        throw e;
      }
      source.result().then(
        (m) => this.settle(who, caps, callId, at, m),
        () => this.o.ledger.release(callId).catch(() => {}),
      );
      return source;
    };
  }

  /**
   * Reserves, waiting out other calls' reservations; asks an admin when a cap is reached. Resolves
   * with when the reservation was made (the call's day and month), or the refusal: the cap reached,
   * as it stood when the call was refused.
   */
  private async admit(
    who: BudgetCaller,
    caps: BudgetCap[],
    callId: string,
    amount: Amount,
    signal: AbortSignal | undefined,
  ): Promise<Admission> {
    const { ledger, clock } = this.o;
    const override =
      signal !== undefined && this.allowedRuns.has(signal) && this.allowedRuns.get(signal) === who.userKey;
    const reserve = (over: boolean) =>
      ledger.reserve({
        callId,
        caps,
        amount,
        now: clock.now(),
        ttlMs: this.o.reservationTtlMs,
        admit: "under",
        ...(over ? { override: true } : {}),
      });
    // Every reservation that holds the call back ends within a lease of when it was made, so the
    // call waits until a lease after it last saw them change (one made after the call began
    // waiting, by a worker that then died, still runs out before the call gives up).
    let waitUntil = clock.now() + this.o.reservationTtlMs;
    let outcome = await reserve(override);
    let seen = holdOf(outcome);
    while (!outcome.ok && heldByReservations(outcome) && clock.now() < waitUntil) {
      await clock.sleep(RESERVED_POLL_MS, signal);
      outcome = await reserve(false);
      const hold = holdOf(outcome);
      if (hold !== seen) {
        seen = hold;
        waitUntil = clock.now() + this.o.reservationTtlMs;
      }
    }
    const refused = outcome.ok ? undefined : outcome;
    if (refused && !signal?.aborted && (await this.askAdmins(who, refused, signal))) {
      if (signal) this.allowedRuns.set(signal, who.userKey);
      this.o.metrics?.budgetOverride();
      outcome = await reserve(true);
    }
    if (!outcome.ok) {
      this.o.metrics?.budgetRefused(outcome.cap);
      return refused ?? outcome;
    }
    for (const cap of caps) this.o.metrics?.budgetReserved(cap, amount.usd);
    return { ok: true, at: clock.now() };
  }

  /** Whether an admin allowed one more run (false at once where nobody can be asked). */
  private async askAdmins(
    who: BudgetCaller,
    state: CapState,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const { approvals, clock } = this.o;
    const chat = who.chat;
    // Without a run's signal (a summary after the run) nobody could stop the wait: refuse at once.
    if (!approvals || !chat || !signal || this.o.approvalTimeoutMs <= 0 || !this.o.hasAdmins(who.platform))
      return false;
    const now = clock.now();
    const record = await approvals.create({
      threadKey: who.threadKey,
      platform: who.platform,
      toolName: "budget",
      args: { cap: `${state.cap.scope}:${state.cap.key}:${state.cap.period}` },
      fingerprint: `budget:${state.cap.scope}:${state.cap.key}:${state.cap.period}:${state.resetsAt}`,
      ...(who.user ? { requestedBy: who.user } : {}),
      createdAt: now,
      expiresAt: now + this.o.approvalTimeoutMs,
    });
    const text = askText(state, record.id, who.user?.name ?? who.user?.id, now, this.o.timeZone);
    let posted: Awaited<ReturnType<BudgetChat["postRequest"]>>;
    try {
      posted = await chat.postRequest(record.id, text, askDecidedText(text, "cancelled"));
      await approvals.attachMessage(record.id, posted.ref);
    } catch (e) {
      // Nobody can decide a request that was not shown: close it, so no reaction acts on it later.
      await approvals.decide(record.id, { outcome: "cancelled", at: clock.now() }).catch(() => {});
      throw e;
    }
    const ref = posted.ref;
    for (const emoji of ["✅", "❌"]) await chat.react(ref, emoji).catch(() => {});
    const settled = await this.awaitDecision(record.id, record.expiresAt, signal);
    const outcome =
      settled.status === "approved" || settled.status === "approved_always"
        ? "approved"
        : settled.status === "pending"
          ? "expired"
          : settled.status;
    const by = settled.decidedBy?.name ?? settled.decidedBy?.id;
    await posted.finish(askDecidedText(text, outcome, by)).catch((e: unknown) => {
      this.o.logger.warn({ err: e, id: record.id }, "could not edit the budget request");
    });
    return outcome === "approved";
  }

  /** The request settled by a decision, the timeout (expired) or the run's stop (cancelled). */
  private async awaitDecision(id: string, expiresAt: number, signal: AbortSignal | undefined) {
    const approvals = this.o.approvals as ApprovalStore;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    if (signal?.aborted) stop.abort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const decided = approvals.waitForDecision(id, stop.signal);
      const timedOut = this.o.clock.sleep(Math.max(0, expiresAt - this.o.clock.now()), stop.signal);
      decided.catch(() => {});
      timedOut.catch(() => {});
      const first = await Promise.race([decided, timedOut.then(() => undefined)]).catch(() => undefined);
      if (first) return first;
      const outcome = signal?.aborted ? "cancelled" : "expired";
      const out = await approvals.decide(id, { outcome, at: this.o.clock.now() });
      return out.record ?? { status: outcome, decidedBy: undefined };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      stop.abort();
    }
  }

  /** Settles the call to what it cost, then posts any warning it earned. */
  private async settle(
    who: BudgetCaller,
    caps: BudgetCap[],
    callId: string,
    reservedAt: number,
    m: AssistantMessage,
  ): Promise<void> {
    const { ledger, clock } = this.o;
    const actual = {
      usd: Math.max(0, m.usage.cost.total || 0),
      tokens: Math.max(0, m.usage.totalTokens || 0),
    };
    if (actual.usd === 0 && actual.tokens === 0) {
      await ledger.release(callId).catch(() => {});
      return;
    }
    const settle = () =>
      ledger.settle({
        callId,
        caps,
        actual,
        now: clock.now(),
        reservedAt,
        model: `${m.provider}/${m.model}`,
      });
    // Spend is never dropped for a passing outage (a failover): the settle is idempotent by call
    // id, so it is tried again for a while; its periods are the ones it was reserved in.
    for (let attempt = 0; ; attempt++) {
      try {
        await settle();
        break;
      } catch (e) {
        if (attempt >= SETTLE_RETRIES_MS.length) {
          this.o.logger.error(
            { err: e, threadKey: who.threadKey, callId, actual },
            "could not settle a model call's spending",
          );
          return;
        }
        await clock.sleep(SETTLE_RETRIES_MS[attempt] ?? 0).catch(() => {});
      }
    }
    for (const cap of caps) this.o.metrics?.budgetSettled(cap, actual.usd);
    await this.warn(who, caps).catch((e: unknown) => {
      this.o.logger.warn({ err: e, threadKey: who.threadKey }, "could not check for a budget warning");
    });
  }

  /**
   * Posts the one-time warning of each cap past `warnAt` and not yet reached, once per period. The
   * limits are the ledger's (an admin's `/budget raise` included), so every cap is read.
   */
  private async warn(who: BudgetCaller, caps: BudgetCap[]): Promise<void> {
    if (this.o.warnAt <= 0 || !who.chat) return;
    const now = this.o.clock.now();
    for (const u of await this.o.ledger.usage(caps, now)) {
      if (!limits(u.limit)) continue;
      const share = shareUsed(u.spent, u.limit);
      if (share < this.o.warnAt || share >= 1) continue;
      const id = `warn:${u.cap.scope}:${u.cap.key}:${u.cap.period}:${u.resetsAt}`;
      if (!(await this.o.ledger.claimOnce(id, now, u.resetsAt))) continue;
      await who.chat.post(warningText(u, now, this.o.timeZone)).catch((e: unknown) => {
        this.o.logger.warn({ err: e, threadKey: who.threadKey }, "could not post a budget warning");
      });
    }
  }
}

/** A reserve the ledger refused: the cap reached, its spending, limit and reset. */
type Refusal = Extract<ReserveOutcome, { ok: false }>;

/** What `admit` came to: let in at `at`, or refused. */
type Admission = { ok: true; at: number } | Refusal;

/** What holds a refused call back (the cap, its spent and live reserved sums), to see it change. */
function holdOf(o: ReserveOutcome): string {
  if (o.ok) return "";
  const { cap, spent, reserved } = o;
  return `${cap.scope}:${cap.key}:${cap.period} ${spent.usd}/${spent.tokens} ${reserved.usd}/${reserved.tokens}`;
}

/** Whether a refusal came from other calls' reservations only: the spending itself is below every reached limit. */
function heldByReservations(o: Refusal): boolean {
  return shareUsed(o.spent, o.limit) < 1;
}

/** The most a call can cost: its prompt (estimated) and `maxTokens` of output, at the model's rates. */
function worstCase(model: Model, context: Context, options?: SimpleStreamOptions): Amount {
  let input = Math.ceil((context.systemPrompt?.length ?? 0) / 4);
  for (const m of context.messages) input += estimateTokens(m);
  if (context.tools) input += Math.ceil(JSON.stringify(context.tools).length / 4);
  const output = Math.max(0, options?.maxTokens ?? model.maxTokens ?? 0);
  const usd = (input * model.cost.input + output * model.cost.output) / 1e6;
  return { usd, tokens: input + output };
}
