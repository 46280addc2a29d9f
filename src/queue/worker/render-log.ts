/**
 * A tenure's side of the render journal: the `RenderLog` each of its runs' sinks records into
 * (fenced by the lease, in order with the session writes), and finishing what a predecessor's runs
 * still owe the chat when the tenure starts (docs/runtime.md, "The render journal").
 */
import type { RenderJournal } from "../state/render-journal.js";
import type { OwedRenderFinisher, RenderLog } from "../types.js";
import type { Tenure } from "./tenure.js";
import type { ThreadSession } from "./thread-session.js";

/** What a holder needs for the journal; both are set together or not at all. */
export interface RenderJournalEnv {
  journal?: RenderJournal | undefined;
  finishOwed?: OwedRenderFinisher | undefined;
}

/**
 * The log of run (or notice) `runId`. Each step waits for the session writes queued before it, so a
 * snapshot recorded when a reply ended is stored before the session entry of that reply: a session
 * that holds an answer implies a journal that owes it until the chat shows it.
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
  const step = (what: string, write: () => Promise<boolean>): Promise<void> =>
    session.sideWrite(async () => {
      try {
        if (!(await write())) tenure.lose();
      } catch (e) {
        env.onError(e, `${what} in the render journal of ${threadKey}`);
      }
    });
  return {
    owe: (snapshot) =>
      step("recording what a run owes the chat", () => journal.put(threadKey, token, runId, snapshot)),
    done: () => step("clearing what a run owed the chat", () => journal.drop(threadKey, token, runId)),
  };
}

/**
 * Finishes every render the thread's journal still owes (a dead predecessor's, or one of this
 * process whose platform refused until now), then clears each one the chat now shows. Records of
 * `skip` (runs of this tenure still rendering) are left alone. Never throws.
 */
export async function finishOwedRenders(
  env: RenderJournalEnv & { onError: (error: unknown, context: string) => void },
  tenure: Tenure,
  session: ThreadSession,
  skip: ReadonlySet<string> = new Set(),
): Promise<void> {
  const { journal, finishOwed } = env;
  if (!journal || !finishOwed) return;
  const { threadKey, token } = tenure;
  try {
    for (const owed of await journal.owed(threadKey)) {
      if (skip.has(owed.runId) || !tenure.active) continue;
      const log = renderLog(env, tenure, session, owed.runId) as RenderLog;
      const shown = owed.snapshot === undefined || (await finishOwed(threadKey, owed.snapshot, log));
      await session.flush();
      if (!shown) continue;
      if (tenure.state === "lost") return;
      if (!(await journal.drop(threadKey, token, owed.runId))) return tenure.lose();
    }
  } catch (e) {
    env.onError(e, `finishing what earlier runs owed the chat in ${threadKey}`);
  }
}
