/**
 * A tenure's side of the render journal: the `RenderLog` each of its runs' sinks records into
 * (fenced by the lease, in order with the session writes), and finishing what a predecessor's runs
 * still owe the chat when the tenure starts (docs/runtime.md, "The render journal").
 */
import type { OwedRender } from "../state/render-journal.js";
import type { RenderLog, RunObserver } from "../types.js";
import type { RenderJournalEnv } from "./holder-env.js";
import type { Tenure } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

/**
 * The log of run (or notice) `runId`. Its writes go one after another (each snapshot replaces the
 * last, so they must land in order) without waiting for the session's writes, so a new message id
 * is stored one round trip after the platform answered; session writes queued after a journal write
 * wait for it, so a snapshot recorded when a reply ended is stored before the session entry of that
 * reply: a session that holds an answer implies a journal that owes it until the chat shows it.
 */
export function renderLog(
  env: RenderJournalEnv & { onError: (error: unknown, context: string) => void },
  tenure: Tenure,
  session: ThreadSession,
  runId: string,
): RenderLog | undefined {
  const journal = env.journal;
  if (!journal) return undefined;
  const { threadKey, token } = tenure;
  let tail: Promise<void> = Promise.resolve();
  const step = (what: string, write: () => Promise<boolean>, afterSession = false): Promise<void> => {
    const saved = afterSession ? session.flush() : undefined;
    tail = tail.then(async () => {
      await saved;
      // Lost: the fence would refuse it. Failed: the holder stopped writing.
      if (tenure.state === "lost" || tenure.state === "failed") return;
      try {
        if (!(await write())) tenure.lose();
      } catch (e) {
        env.onError(e, `${what} in the render journal of ${threadKey}`);
      }
    });
    session.barrier(tail);
    return tail;
  };
  return {
    owe: (snapshot) =>
      step("recording what a run owes the chat", () => journal.put(threadKey, token, runId, snapshot)),
    posted: (key, ref) => {
      if (tenure.state === "lost" || tenure.state === "failed") return;
      // Sent now, not queued behind the run's snapshots: the id is on its way to Redis in the same
      // tick the platform's answer arrived. A field of its own, so it needs no order with them.
      journal.posted(threadKey, token, runId, key, ref).then(
        (ok) => {
          if (!ok) tenure.lose();
        },
        (e: unknown) => env.onError(e, `recording a posted message id in the render journal of ${threadKey}`),
      );
    },
    saved: () => session.flush().catch(() => {}),
    // Only once the session holds what the chat shows: a worker that dies before that leaves the
    // record, and the next holder, which answers again what the session lacks, finishes it too.
    done: () => step("clearing what a run owed the chat", () => journal.drop(threadKey, token, runId), true),
    held: () => tenure.state !== "lost" && tenure.state !== "failed",
  };
}

/**
 * Finishes every render the thread's journal still owes (a dead predecessor's, or one of this
 * process whose platform refused until now), then clears each one the chat now shows. Records of
 * `skip` (runs of this tenure still rendering) are left alone. `read`: the journal's owed records,
 * when the caller already asked for them. Never throws.
 */
export async function finishOwedRenders(
  env: RenderJournalEnv & {
    onError: (error: unknown, context: string) => void;
    runObserver?: RunObserver | undefined;
  },
  tenure: Tenure,
  session: ThreadSession,
  skip: ReadonlySet<string> = new Set(),
  read?: Promise<OwedRender[]>,
): Promise<void> {
  const { journal, finishOwed } = env;
  if (!journal || !finishOwed) return;
  const { threadKey, token } = tenure;
  try {
    for (const owed of await (read ?? journal.owed(threadKey))) {
      if (skip.has(owed.runId) || !tenure.active) continue;
      const log = renderLog(env, tenure, session, owed.runId) as RenderLog;
      const messages = session.entry?.agent.state.messages ?? [];
      const saved = (at: number) => messages.some((m) => m.role === "assistant" && m.timestamp === at);
      const shown =
        owed.snapshot === undefined || (await finishOwed(threadKey, owed.snapshot, log, saved, owed.posted));
      await session.flush();
      if (!shown) continue;
      if (tenure.state === "lost") return;
      if (!(await journal.drop(threadKey, token, owed.runId))) return tenure.lose();
      try {
        env.runObserver?.renderFinished(threadKey, owed.runId);
      } catch (e) {
        env.onError(e, `reporting a finished render of ${threadKey}`);
      }
    }
  } catch (e) {
    env.onError(e, `finishing what earlier runs owed the chat in ${threadKey}`);
  }
}
