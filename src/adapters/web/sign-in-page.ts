/**
 * The page a browser without a web chat session gets: why it cannot see the chat, and a form to
 * paste the sign-in link (or its token) that `switchboard start` printed. No script; its own strict
 * Content-Security-Policy (the form may post only to this server).
 */
import { createHash } from "node:crypto";

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}" +
  "main{max-width:34em;margin:4em auto;padding:2em;background:#fff;border-radius:10px;box-shadow:0 1px 4px #0002}" +
  "h1{font-size:1.3em;margin-top:0}input[type=text]{width:100%;box-sizing:border-box;padding:.5em;font:inherit}" +
  "button{margin-top:1em;padding:.5em 1.2em;font:inherit;background:#3558d8;color:#fff;border:0;border-radius:6px}" +
  "code{background:#eef0f4;padding:0 .3em;border-radius:4px}.error{color:#b3261e}";

const styleHash = `'sha256-${createHash("sha256").update(STYLE, "utf8").digest("base64")}'`;

/** The Content-Security-Policy of the sign-in page. */
export const SIGN_IN_CSP = [
  "default-src 'none'",
  `style-src ${styleHash}`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The page: `action` is where the form posts, `next` where a successful sign-in goes. */
export function signInPage(o: { action: string; next: string; problem?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Switchboard</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Sign in to the web chat</h1>
${o.problem ? `<p class="error" role="alert">${escapeHtml(o.problem)}</p>` : ""}
<p>Open the sign-in link that <code>switchboard start</code> printed in its terminal (or its log),
or paste it here. Each link works once; a signed-in page can make a new one under
<em>Sign in elsewhere</em>.</p>
<form method="post" action="${escapeHtml(o.action)}">
<label for="token">Sign-in link or token</label>
<input type="text" id="token" name="token" autocomplete="off" autofocus required>
<input type="hidden" name="next" value="${escapeHtml(o.next)}">
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>`;
}
