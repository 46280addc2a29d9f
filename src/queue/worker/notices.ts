/** Runtime notices posted into a thread outside a run (dropped messages, a stop, `/new`, `/compact`). */
import { randomUUID } from "node:crypto";
import type { RunSinkFactory } from "../types.js";

/** Posts `text` through a one-off sink (`notice:<uuid>`); a failure is reported, never thrown. */
export async function postNotice(
  env: { sinks: RunSinkFactory; onError: (error: unknown, context: string) => void },
  threadKey: string,
  text: string,
): Promise<void> {
  try {
    const sink = env.sinks(threadKey, `notice:${randomUUID()}`);
    await sink.onNotice(text);
    await sink.close();
  } catch (e) {
    env.onError(e, `posting a notice to ${threadKey}`);
  }
}
