/**
 * The LLM layer: one streaming protocol, a registry of wire APIs, and the functions that
 * dispatch on `model.api`. Import from here, not from individual files.
 */
export { AssistantMessageEventStream, EventStream } from "./event-stream.js";
export { getApiProvider, listApiProviders, registerApiProvider, unregisterApiProviders } from "./registry.js";
export { complete, stream, streamSimple } from "./stream.js";
export type * from "./types.js";
export { THINKING_LEVELS } from "./types.js";
export { calculateCost, createAssistantMessage, emptyUsage } from "./usage.js";
