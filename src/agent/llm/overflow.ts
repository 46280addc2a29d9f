/**
 * Recognising "the conversation no longer fits the model's context window", so compaction can
 * react (summarise older turns and retry) instead of showing the error to the user.
 */
import type { AssistantMessage } from "./types.js";

/**
 * Error texts of each provider when the prompt is too long. Matched case-insensitively against
 * `errorMessage`, which providers build from the vendor's own error message and code.
 */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i, // Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
  /input is too long for requested model/i, // Anthropic on Bedrock / Vertex
  /context_length_exceeded/i, // OpenAI error code
  /maximum context length/i, // OpenAI, vLLM: "This model's maximum context length is 8192 tokens"
  /exceeds the context window/i, // OpenAI Responses
  /input token count.*exceeds the maximum/i, // Google: "The input token count (1234) exceeds the maximum number of tokens allowed (1000)"
  /exceeds the maximum number of tokens/i, // Google
  /context window (?:is )?(?:full|exceeded)/i, // generic
  /context size has been exceeded/i, // llama.cpp server
  /exceeds? (?:the )?(?:available )?context (?:size|length)/i, // llama.cpp, LM Studio
  /greater than the context length/i, // LM Studio
  /context length of only \d+ tokens/i, // LM Studio: "the model is loaded with context length of only 4096 tokens"
  /too many tokens/i, // generic ("Request contains too many tokens")
  /reduce the length of the (?:messages|prompt)/i, // OpenAI-compatible proxies
  /maximum prompt length/i, // Groq, others
  /context length exceeded/i, // Mistral, Ollama proxies
];

/**
 * True when `message` failed because the context did not fit: an error whose text matches a
 * known overflow message of Anthropic, OpenAI, Google or a local OpenAI-compatible server; or a
 * "silent" overflow, where the server truncated the prompt without an error and the reported
 * input (including cached tokens) exceeds `contextWindow`.
 */
export function isContextOverflow(message: AssistantMessage, contextWindow?: number): boolean {
  if (message.stopReason === "error" && message.errorMessage) {
    if (OVERFLOW_PATTERNS.some((pattern) => pattern.test(message.errorMessage ?? ""))) return true;
  }
  if (contextWindow !== undefined && contextWindow > 0 && message.stopReason !== "aborted") {
    const { input, cacheRead, cacheWrite } = message.usage;
    if (input + cacheRead + cacheWrite > contextWindow) return true;
  }
  return false;
}
