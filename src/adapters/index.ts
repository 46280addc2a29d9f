/**
 * The channel layer's public surface: the adapter contract and the platform-neutral renderer.
 *
 * Platform adapters are not re-exported here on purpose: each pulls in its SDK, and the gateway
 * loads only the configured ones, e.g. `await import("./adapters/telegram/index.js")`.
 */
export * from "./render/index.js";
export * from "./types.js";
