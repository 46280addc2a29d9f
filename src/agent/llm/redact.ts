/**
 * The one secret scrubber: every credential shape Switchboard knows, and the functions that mask
 * them. Log lines (src/gateway/log.ts), chat output (the renderer and the gateway's outbound adapter
 * wrapper), CLI output and provider error messages all go through it, so a shape added here is
 * masked everywhere at once.
 *
 * It lives in the engine's innermost layer because the providers need it to keep their own keys
 * out of `errorMessage`, and every other layer may import the engine.
 *
 * ```ts
 * redactSecrets(`401 for Bot ${discordToken}`);        // "401 for Bot [redacted]"
 * redactSecrets("signing secret abc123", ["abc123"]);  // "signing secret [redacted]"
 * redactGrowingText("GITHUB_TOKEN=ghp_12ab");          // "GITHUB_TOKEN=[redacted]"
 * ```
 */

/** What a masked secret reads as. */
export const REDACTED = "[redacted]";

/** Credential shapes that are secret wherever they appear, complete. */
const TOKEN_SHAPES: readonly RegExp[] = [
  /\bxox[a-z]-[A-Za-z0-9-]{8,}/g, // Slack bot/user/refresh tokens
  /\bxapp-[A-Za-z0-9-]{8,}/g, // Slack app-level tokens
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g, // Anthropic keys
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI keys and most OpenAI-compatible proxies
  /\bAIza[0-9A-Za-z_-]{20,}/g, // Google API keys
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens (classic, OAuth, app, refresh)
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g, // GitHub fine-grained tokens
  /(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens (also inside /bot<token>/ URLs)
  /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}/g, // Discord bot tokens
];

/**
 * The start of a credential at the very end of a text that is still growing (a streamed answer):
 * masked too, so no chat frame ever shows the first characters of a token whose end has not arrived.
 */
const TRAILING_TOKEN_PREFIXES: readonly RegExp[] = [
  /\bxox[a-z]-[A-Za-z0-9-]*$/,
  /\bxapp-[A-Za-z0-9-]*$/,
  /\bsk-[A-Za-z0-9_-]*$/,
  /\bAIza[0-9A-Za-z_-]*$/,
  /\bgh[pousr]_[A-Za-z0-9]*$/,
  /\bgithub_pat_[A-Za-z0-9_]*$/,
  /(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_-]*$/,
  /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_.-]*$/,
  /\bBearer\s+[A-Za-z0-9._~+/=:-]+$/,
];

const AUTH_SCHEME = /\b(Bearer|Bot|Basic|Token)(\s+)([A-Za-z0-9._~+/=:-]{8,})/gi;
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@"]*:)[^/\s@"]+@/gi;

/**
 * Whether the word after an auth scheme is a credential rather than prose ("Bot documentation",
 * "this bot directly.", "token expiration"): `Bearer` is always followed by one; after the others
 * the word, without the punctuation that ends a sentence, takes a digit, an inner symbol or an
 * inner capital, which random tokens virtually always have and English words do not.
 */
function isCredentialAfter(scheme: string, value: string): boolean {
  if (scheme.toLowerCase() === "bearer") return true;
  const word = value.replace(/[.:,;]+$/, "");
  return /[0-9~+/=_]/.test(word) || /[A-Za-z][.:-][A-Za-z0-9]/.test(word) || /[A-Z]/.test(word.slice(1));
}

/** Below this length a configured secret is masked only where it stands as a word of its own. */
const WHOLE_WORD_BELOW = 8;

/** The pattern that finds `secret` in a text (as a whole word when it is short). */
function secretPattern(secret: string): RegExp {
  const body = escapeRegExp(secret);
  return secret.length < WHOLE_WORD_BELOW
    ? new RegExp(`(?<![A-Za-z0-9])${body}(?![A-Za-z0-9])`, "g")
    : new RegExp(body, "g");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `text` with every known credential shape, every `Bearer`/`Bot`/`Basic`/`Token` credential, every
 * URL password and every one of `secrets` (exact values of any length, also in their JSON-escaped
 * form; values under 8 characters only where they stand as a word of their own, so a short key does
 * not mask every word that contains it) replaced by `[redacted]`. Use it for any text that leaves
 * the process: log lines, chat messages, error messages, CLI output, tool output. Pure; never throws.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  // Longest first: a secret that contains a shorter one is masked whole.
  const ordered = secrets.filter((s): s is string => s !== undefined && s.trim() !== "");
  ordered.sort((a, b) => b.length - a.length);
  for (const secret of ordered) {
    out = out.replace(secretPattern(secret), REDACTED);
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) out = out.replace(secretPattern(escaped), REDACTED);
  }
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, REDACTED);
  out = out.replace(AUTH_SCHEME, (match, scheme: string, space: string, value: string) =>
    isCredentialAfter(scheme, value) ? `${scheme}${space}${REDACTED}` : match,
  );
  return out.replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`);
}

/**
 * `redactSecrets(text, secrets)` for a text that may still grow (a chat message being streamed):
 * the beginning of a credential at its end is masked as well, even before it has its full shape.
 * The final text of a message goes through `redactSecrets` instead, so a word that only looked like
 * the start of a token is shown once it is complete.
 */
export function redactGrowingText(text: string, secrets: readonly (string | undefined)[] = []): string {
  const out = redactSecrets(text, secrets);
  for (const prefix of TRAILING_TOKEN_PREFIXES) {
    const m = prefix.exec(out);
    if (m) {
      const scheme = /^Bearer\s+/.exec(m[0])?.[0] ?? "";
      return `${out.slice(0, m.index)}${scheme}${REDACTED}`;
    }
  }
  return out;
}
