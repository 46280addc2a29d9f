/**
 * CommonMark (as LLMs write it) to each platform's dialect. Every writer produces text the platform
 * accepts whatever the input: Telegram HTML is always balanced and escaped, Slack text has `&<>`
 * escaped. None of them makes the visible text longer than the source, so splitting the source
 * under a platform's limit keeps each converted part under it too (Slack's escaping lengthens the
 * raw text, which is why the Slack adapter advertises a limit below Slack's own).
 */
import { type Block, type Inline, parseBlocks } from "./markdown-parse.js";

interface Writer {
  escape(text: string): string;
  inline(node: Inline, children: string): string;
  code(lang: string, text: string): string;
  heading(content: string): string;
  quote(lines: string[]): string;
  listItem(marker: string, indent: number, content: string): string;
  rule(): string;
}

function writeInline(nodes: Inline[], w: Writer): string {
  let out = "";
  for (const n of nodes) {
    if (n.kind === "text") out += w.escape(n.text);
    else if (n.kind === "code") out += w.inline(n, "");
    else out += w.inline(n, writeInline(n.children, w));
  }
  return out;
}

function write(text: string, w: Writer): string {
  const blocks = parseBlocks(text);
  const lines: string[] = [];
  let quote: string[] | undefined;
  const endQuote = () => {
    if (quote) lines.push(w.quote(quote));
    quote = undefined;
  };
  for (const b of blocks) {
    if (b.kind === "quote") {
      quote ??= [];
      for (const l of b.lines) quote.push(writeInline(l, w));
      continue;
    }
    endQuote();
    lines.push(writeBlock(b, w));
  }
  endQuote();
  return lines.join("\n");
}

function writeBlock(b: Exclude<Block, { kind: "quote" }>, w: Writer): string {
  switch (b.kind) {
    case "code":
      return w.code(b.lang, b.text);
    case "heading":
      return w.heading(writeInline(b.content, w));
    case "list-item":
      return w.listItem(b.marker, b.indent, writeInline(b.content, w));
    case "rule":
      return w.rule();
    case "line":
      return writeInline(b.content, w);
    case "blank":
      return "";
  }
}

const bullet = (marker: string) => (/^\d/.test(marker) ? marker : "•");

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Telegram Bot API HTML (`parse_mode: "HTML"`): b, i, s, code, pre, a, blockquote. */
export function toTelegramHtml(text: string): string {
  return write(text, {
    escape: escapeHtml,
    inline(n, children) {
      switch (n.kind) {
        case "code":
          return `<code>${escapeHtml(n.text)}</code>`;
        case "bold":
          return `<b>${children}</b>`;
        case "italic":
          return `<i>${children}</i>`;
        case "strike":
          return `<s>${children}</s>`;
        case "link":
          return /^(https?|tg|mailto):/i.test(n.url)
            ? `<a href="${escapeHtml(n.url).replace(/"/g, "&quot;")}">${children}</a>`
            : children;
        default:
          return children;
      }
    },
    code: (lang, body) =>
      lang && /^[\w+#-]+$/.test(lang)
        ? `<pre><code class="language-${lang}">${escapeHtml(body)}</code></pre>`
        : `<pre>${escapeHtml(body)}</pre>`,
    heading: (c) => `<b>${c}</b>`,
    quote: (lines) => `<blockquote>${lines.join("\n")}</blockquote>`,
    listItem: (m, indent, c) => `${" ".repeat(indent)}${bullet(m)} ${c}`,
    rule: () => "──────────",
  });
}

const escapeSlack = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ```pre```, <url|label>. */
export function toSlackMrkdwn(text: string): string {
  return write(text, {
    escape: escapeSlack,
    inline(n, children) {
      switch (n.kind) {
        case "code":
          return `\`${escapeSlack(n.text)}\``;
        case "bold":
          return `*${children}*`;
        case "italic":
          return `_${children}_`;
        case "strike":
          return `~${children}~`;
        case "link":
          return `<${n.url.replace(/[<>|]/g, encodeURIComponent)}|${children.replace(/[|>]/g, " ")}>`;
        default:
          return children;
      }
    },
    code: (_lang, body) => `\`\`\`\n${escapeSlack(body)}\n\`\`\``,
    heading: (c) => `*${c}*`,
    quote: (lines) => lines.map((l) => `> ${l}`).join("\n"),
    listItem: (m, indent, c) => `${" ".repeat(indent)}${bullet(m)} ${c}`,
    rule: () => "──────────",
  });
}

/** Discord renders CommonMark itself; only unsupported pieces change (rules). */
export function toDiscordMarkdown(text: string): string {
  return parseBlocks(text).some((b) => b.kind === "rule")
    ? text
        .split("\n")
        .map((l) => (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(l) ? "──────────" : l))
        .join("\n")
    : text;
}

/** Markup stripped: what a user should read when the platform rejected the formatted version. */
export function toPlainText(text: string): string {
  return write(text, {
    escape: (s) => s,
    inline(n, children) {
      if (n.kind === "code") return n.text;
      if (n.kind === "link") return children === n.url ? n.url : `${children} (${n.url})`;
      return children;
    },
    code: (_lang, body) => body,
    heading: (c) => c,
    quote: (lines) => lines.map((l) => `> ${l}`).join("\n"),
    listItem: (m, indent, c) => `${" ".repeat(indent)}${bullet(m)} ${c}`,
    rule: () => "──────────",
  });
}
