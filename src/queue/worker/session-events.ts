/**
 * Session events for the factory's `onSessionEvent` hook (extensions' `session_*` handlers).
 */
import type { SessionEvent, SessionEventResult } from "../../extensions/types.js";
import type { SessionEventHook } from "../types.js";

/** Calls the factory's session-event hook; a throw is reported and counts as no answer. */
export async function emitSessionEvent(
  hook: SessionEventHook | undefined,
  event: SessionEvent,
  onError: (error: unknown, context: string) => void,
): Promise<SessionEventResult | undefined> {
  if (!hook) return undefined;
  try {
    return (await hook(event)) ?? undefined;
  } catch (e) {
    onError(e, `the ${event.type} hook`);
    return undefined;
  }
}
