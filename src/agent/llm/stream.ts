import { getApiProvider, listApiProviders } from "./registry.js";
import type {
  Api,
  ApiProvider,
  AssistantMessage,
  AssistantMessageEventSource,
  Context,
  Model,
  SimpleStreamOptions,
  StreamOptions,
} from "./types.js";

function resolveProvider(api: Api): ApiProvider<Api, StreamOptions> {
  const provider = getApiProvider(api);
  if (!provider) {
    const known = listApiProviders();
    throw new Error(
      `No LLM provider is registered for api "${api}". ` +
        (known.length > 0 ? `Registered apis: ${known.join(", ")}. ` : "No provider is registered at all. ") +
        `Call registerBuiltInApiProviders() or registerApiProvider({ api: "${api}", ... }) first.`,
    );
  }
  return provider;
}

/**
 * Streams one assistant message from `model` with provider-neutral options.
 *
 * Throws only for a programmer error (no provider registered for `model.api`). Once the stream
 * is returned it never throws: failures arrive as its final `error` event and as a result with
 * `stopReason: "error" | "aborted"` and an `errorMessage`.
 */
export function streamSimple(
  model: Model,
  context: Context,
  options?: SimpleStreamOptions,
): AssistantMessageEventSource {
  return resolveProvider(model.api).streamSimple(model, context, options);
}

/** Like `streamSimple`, with the provider's own options passed through untouched. */
export function stream<TOptions extends StreamOptions>(
  model: Model,
  context: Context,
  options?: TOptions,
): AssistantMessageEventSource {
  return resolveProvider(model.api).stream(model, context, options);
}

/** Runs `streamSimple` to the end and returns the final message (check its `stopReason`). */
export function complete(
  model: Model,
  context: Context,
  options?: SimpleStreamOptions,
): Promise<AssistantMessage> {
  return streamSimple(model, context, options).result();
}
