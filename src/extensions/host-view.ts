/**
 * The host as extensions see it: stopping the thread or starting a new session through it also
 * tells the extensions' `thread_stop` handlers, whose notes join the outcome.
 */
import type { ControlOutcome, ExtensionHost, ThreadStopEvent } from "./types.js";

/** `host` with `stop` and `newSession` followed by `emit` (whose notes join the outcome). */
export function withStopEvents(
  host: ExtensionHost,
  emit: (reason: ThreadStopEvent["reason"]) => Promise<string[]>,
): ExtensionHost {
  const after = async (
    outcome: ControlOutcome,
    reason: ThreadStopEvent["reason"],
  ): Promise<ControlOutcome> => {
    const notes = await emit(reason);
    return notes.length > 0 ? { ...outcome, notes: [...(outcome.notes ?? []), ...notes] } : outcome;
  };
  return {
    get thread() {
      return host.thread;
    },
    post: (text, options) => host.post(text, options),
    edit: (ref, text, options) => host.edit(ref, text, options),
    react: (ref, emoji) => host.react(ref, emoji),
    reply: (text) => host.reply(text),
    sendMessage: (message, deliverAs) => host.sendMessage(message, deliverAs),
    appendEntry: (customType, data) => host.appendEntry(customType, data),
    getSettings: () => host.getSettings(),
    setModel: (ref) => host.setModel(ref),
    setThinkingLevel: (level) => host.setThinkingLevel(level),
    stop: async () => after(await host.stop(), "stop"),
    newSession: async () => after(await host.newSession(), "new_session"),
    deliver: (text, mode) => host.deliver(text, mode),
    compact: (instructions) => host.compact(instructions),
    status: () => host.status(),
    ...(host.durableMessage ? { durableMessage: (id: string) => host.durableMessage?.(id) } : {}),
    ...(host.sendFile
      ? {
          sendFile: (file: { path: string; name: string }, options?: { caption?: string }) =>
            (host.sendFile as NonNullable<ExtensionHost["sendFile"]>)(file, options),
        }
      : {}),
    ...(host.maxFileBytes ? { maxFileBytes: () => host.maxFileBytes?.() ?? 0 } : {}),
  };
}
