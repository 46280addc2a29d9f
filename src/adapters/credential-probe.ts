/**
 * Helpers of the adapters' credential probes (`ChannelAdapter.probe`, run by `switchboard check`):
 * one bounded HTTP request to the platform's API with the configured token, and the shape of a
 * refusal. The token travels only in the request; details say what answered, never the token.
 */
import type { CredentialCheck } from "./types.js";

/** Calls `url` (5 s at most) and lets `judge` read the HTTP status and the JSON body ({} if none). */
export async function askPlatform(
  url: string,
  init: RequestInit,
  judge: (status: number, body: Record<string, unknown>) => CredentialCheck,
): Promise<CredentialCheck> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return judge(res.status, body);
}

/** A refused credential: a config error (`check` exits 2), with what to set. */
export function refusedBy(detail: string, fix: string): CredentialCheck {
  return { ok: false, refused: true, detail: `${detail}: the token was refused; ${fix}` };
}
