/**
 * One message outside a run's answers (an approval request) under the render journal's protocol
 * (docs/runtime.md, "The render journal"): the post's intent and the text the message must end
 * with if the worker dies are recorded before the post, its id the instant the platform answers,
 * its final text before the edit that shows it; the record goes once the platform confirmed. The
 * record is an ordinary render snapshot, so the next holder finishes it like any owed render
 * (`finishOwedRender`): it finds a post whose answer never came by its key, edits the message to
 * the recorded text, or posts that text when the post never happened.
 */
import type { ChannelAdapter, MessageRef, RenderLog } from "../types.js";
import { isChannelError } from "../types.js";
import { newPostKey } from "./live-message.js";
import { owedMessage, type RenderSnapshot } from "./owed.js";

/** A durable message (the extensions' `DurableMessage`). */
export interface JournaledMessage {
  post(text: string, ifStopped: string): Promise<MessageRef>;
  finish(text: string): Promise<void>;
}

/** The durable message of `threadKey` recorded in `log` (markdown; one message, no split). */
export function journaledMessage(
  adapter: ChannelAdapter,
  threadKey: string,
  log: RenderLog,
): JournaledMessage {
  let ref: MessageRef | undefined;
  const owe = (refs: MessageRef[], text: string, posting?: { part: number; key: string }) =>
    log.owe({ v: 1, messages: [owedMessage(refs, text, undefined, posting)] } satisfies RenderSnapshot);
  return {
    async post(text, ifStopped) {
      if (ref !== undefined) throw new Error("A durable message is posted once; edit it with finish().");
      const key = newPostKey();
      await owe([], ifStopped, { part: 0, key });
      if (!log.held())
        throw new Error(`The thread ${threadKey} is held by another worker now; nothing posted.`);
      const sent = await adapter.post(threadKey, text, { format: "markdown", idempotencyKey: key });
      // No await between the platform's answer and this: the id is on its way to the journal now.
      log.posted(key, sent);
      ref = sent;
      return sent;
    },
    async finish(text) {
      if (ref === undefined) throw new Error("A durable message is finished after it was posted.");
      await owe([ref], text);
      if (!log.held()) return;
      try {
        await adapter.edit(ref, text, { format: "markdown" });
      } catch (e) {
        if (!isChannelError(e, "not_modified")) throw e;
      }
      await log.done();
    },
  };
}
