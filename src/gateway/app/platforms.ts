/**
 * Which platform a thread belongs to (the thread key's prefix, which adapters encode), so the
 * inbound pipeline, the agent factory and the renderers read one channel's slice without branching
 * on platform names.
 */
import type { Platform } from "../../adapters/types.js";

export const PLATFORMS: readonly Platform[] = ["slack", "discord", "telegram", "web"];

/** The platform of `threadKey` (`slack:T1:C2:1712.33` → `slack`); undefined for a key no adapter made. */
export function platformOf(threadKey: string): Platform | undefined {
  const prefix = threadKey.slice(0, threadKey.indexOf(":"));
  return (PLATFORMS as readonly string[]).includes(prefix) ? (prefix as Platform) : undefined;
}

/** The user id of the person at the web chat page (the web adapter's default identity). */
export const WEB_USER_ID = "web:local";
