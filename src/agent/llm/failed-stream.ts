/**
 * A model call that ends before it is made, as data: the stream carries one `error` event whose
 * message has `stopReason` `error` (or `aborted`) and `errorMessage` set, as a provider's failure
 * would. For calls the deployment refuses itself (no model configured, a budget cap reached).
 */
import { AssistantMessageEventStream } from "./event-stream.js";
import type { AssistantMessage, AssistantMessageEventSource, Model } from "./types.js";
import { createAssistantMessage } from "./usage.js";

/** A finished stream whose result is a failure saying `errorMessage`. */
export function failedStream(
  model: Pick<Model, "api" | "provider" | "id">,
  errorMessage: string,
  reason: "error" | "aborted" = "error",
): AssistantMessageEventSource {
  const stream = new AssistantMessageEventStream();
  const message: AssistantMessage = { ...createAssistantMessage(model), stopReason: reason, errorMessage };
  stream.push({ type: "error", reason, error: message });
  stream.end();
  return stream;
}
