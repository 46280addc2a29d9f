/** Runtime notices posted into a thread outside a run (dropped messages, a stop, `/new`, `/compact`). */
import { randomUUID } from "node:crypto";
import type { RenderLog, RunSinkFactory } from "../types.js";

/**
 * Posts `text` through a one-off sink (`notice:<uuid>`); a failure is reported, never thrown.
 * `logFor` gives the notice its render-journal log, so a notice owed by a worker that dies is
 * posted by the next holder.
 */
export async function postNotice(
  env: { sinks: RunSinkFactory; onError: (error: unknown, context: string) => void },
  threadKey: string,
  text: string,
  logFor?: (noticeId: string) => RenderLog | undefined,
): Promise<void> {
  try {
    const id = `notice:${randomUUID()}`;
    const log = logFor?.(id);
    const sink = log ? env.sinks(threadKey, id, log) : env.sinks(threadKey, id);
    await sink.onNotice(text);
    await sink.close();
  } catch (e) {
    env.onError(e, `posting a notice to ${threadKey}`);
  }
}
