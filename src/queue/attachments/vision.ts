/**
 * A picture described in words by the deployment's vision model (`models.vision`), for a thread
 * whose model cannot see pictures. The description goes into the user message beside the file's
 * path; a failed description is data (the model gets the path only, and the reason).
 */
import { complete } from "../../agent/llm/stream.js";
import type { ImageContent, Model } from "../../agent/llm/types.js";

const PROMPT =
  "Describe this picture for someone who cannot see it, so they can answer questions about it: " +
  "what it shows, all text in it word for word (error messages, code, numbers), and anything unusual. " +
  "Be factual and complete, without guessing at what is not visible.";

/** The description of `image`, or `{ error }` with why there is none. */
export async function describePicture(
  model: Model,
  image: ImageContent,
  name: string,
  signal?: AbortSignal,
): Promise<{ text: string } | { error: string }> {
  const reply = await complete(
    model,
    {
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: `${PROMPT}\n\nThe file is called ${name}.` }, image],
          timestamp: Date.now(),
        },
      ],
    },
    signal ? { signal } : {},
  );
  if (reply.stopReason === "error" || reply.stopReason === "aborted")
    return { error: reply.errorMessage ?? "the vision model failed" };
  const text = reply.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n")
    .trim();
  return text ? { text } : { error: "the vision model gave no description" };
}
