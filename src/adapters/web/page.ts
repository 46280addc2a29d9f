/**
 * The web chat page: one HTML document with its CSS and JavaScript inline (no build step, no CDN),
 * assembled once from the files in `public/`. It is served with a Content-Security-Policy that
 * allows exactly that inline script and style (by hash) and requests to its own origin, so even a
 * rendering bug could not run injected script. The base path the page talks to is filled in per
 * request (the gateway may mount the chat under any path), and so is the page's CSRF token.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const read = (name: string) => readFileSync(new URL(`./public/${name}`, import.meta.url), "utf8");

/** The page's script: the Markdown renderer and the app as one module, without the import between them. */
function pageScript(): string {
  const markdown = read("markdown.js").replace(/^export /gm, "");
  const app = read("app.js").replace(/^import \{ renderMarkdown \} from "\.\/markdown\.js";\n/m, "");
  if (app.includes('from "./markdown.js"'))
    throw new Error("web chat page: app.js imports markdown.js in an unexpected form");
  // A "</script" inside the code would end the element early.
  return `${markdown}\n${app}`.replace(/<\/script/gi, "<\\/script");
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

export interface WebPage {
  /** The HTML for a page served at `base` (ends with `/`), carrying the page's CSRF token. */
  html(base: string, csrf: string): string;
  /** The Content-Security-Policy header value. */
  readonly csp: string;
}

const escapeAttribute = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

let cached: WebPage | undefined;

/** The page, built on first use. */
export function webPage(): WebPage {
  if (cached) return cached;
  const script = pageScript();
  const style = read("style.css");
  const template = read("index.html");
  if (!template.includes("{{BASE}}") || !template.includes("{{CSRF}}"))
    throw new Error("web chat page: index.html lost {{BASE}} or {{CSRF}}");
  // Filled once; only the base and the CSRF token change per request.
  const filled = template.replace("{{STYLE}}", () => style).replace("{{SCRIPT}}", () => script);
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  cached = {
    html: (base, csrf) =>
      filled
        .replace("{{BASE}}", () => escapeAttribute(base))
        .replace("{{CSRF}}", () => escapeAttribute(csrf)),
    csp,
  };
  return cached;
}
