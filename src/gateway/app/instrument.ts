/**
 * An adapter seen through metrics: every outbound platform request (post, edit, delete, react,
 * unreact, typing, history, finding a post, file downloads and uploads) is counted by method and outcome, and 429s separately. The wrapped
 * adapter behaves exactly like the original (same results, same errors).
 */
import {
  type ChannelAdapter,
  type EditOptions,
  isChannelError,
  type MessageRef,
  type PostOptions,
} from "../../adapters/types.js";
import type { SwitchboardMetrics } from "../http/metrics.js";

/** `adapter` with its outbound calls counted in `metrics`. */
export function instrumentAdapter(adapter: ChannelAdapter, metrics: SwitchboardMetrics): ChannelAdapter {
  const platform = adapter.platform;
  async function counted<T>(method: string, call: () => Promise<T>): Promise<T> {
    try {
      const value = await call();
      metrics.platformApiCall(platform, method, "ok");
      return value;
    } catch (err) {
      metrics.platformApiCall(
        platform,
        method,
        isChannelError(err, "rate_limited") ? "rate_limited" : "error",
      );
      throw err;
    }
  }
  const wrapped: ChannelAdapter = {
    platform,
    capabilities: adapter.capabilities,
    start: (handlers) => adapter.start(handlers),
    stop: () => adapter.stop(),
    connections: () => adapter.connections(),
    post: (threadKey: string, text: string, opts?: PostOptions) =>
      counted("post", () => adapter.post(threadKey, text, opts)),
    edit: (ref: MessageRef, text: string, opts?: EditOptions) =>
      counted("edit", () => adapter.edit(ref, text, opts)),
    delete: (ref) => counted("delete", () => adapter.delete(ref)),
    react: (ref, emoji) => counted("react", () => adapter.react(ref, emoji)),
    unreact: (ref, emoji) => counted("unreact", () => adapter.unreact(ref, emoji)),
    typing: (threadKey) => counted("typing", () => adapter.typing(threadKey)),
    channelOf: (threadKey) => adapter.channelOf(threadKey),
  };
  if (adapter.editIntervalFor) {
    const f = adapter.editIntervalFor.bind(adapter);
    wrapped.editIntervalFor = (threadKey) => f(threadKey);
  }
  if (adapter.rateRuleFor) {
    const f = adapter.rateRuleFor.bind(adapter);
    wrapped.rateRuleFor = (threadKey) => f(threadKey);
  }
  if (adapter.channelDefaultsKey) {
    const f = adapter.channelDefaultsKey.bind(adapter);
    wrapped.channelDefaultsKey = (threadKey) => f(threadKey);
  }
  if (adapter.stopTyping) {
    const f = adapter.stopTyping.bind(adapter);
    wrapped.stopTyping = (threadKey) => counted("stop_typing", () => f(threadKey));
  }
  if (adapter.fetchHistory) {
    const f = adapter.fetchHistory.bind(adapter);
    wrapped.fetchHistory = (threadKey, limit, before) =>
      counted("history", () => f(threadKey, limit, before));
  }
  if (adapter.findPosted) {
    const f = adapter.findPosted.bind(adapter);
    wrapped.findPosted = (threadKey, key, opts) => counted("find_posted", () => f(threadKey, key, opts));
  }
  if (adapter.download) {
    const f = adapter.download.bind(adapter);
    wrapped.download = (file, opts) => counted("download", () => f(file, opts));
  }
  if (adapter.uploadFile) {
    const f = adapter.uploadFile.bind(adapter);
    wrapped.uploadFile = (threadKey, file, opts) => counted("upload", () => f(threadKey, file, opts));
  }
  if (adapter.findUploaded) {
    const f = adapter.findUploaded.bind(adapter);
    wrapped.findUploaded = (threadKey, key, opts) => counted("find_uploaded", () => f(threadKey, key, opts));
  }
  if (adapter.registerCommands) {
    const f = adapter.registerCommands.bind(adapter);
    wrapped.registerCommands = (commands) => counted("register_commands", () => f(commands));
  }
  return wrapped;
}
