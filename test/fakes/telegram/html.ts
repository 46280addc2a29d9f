/**
 * Telegram's `parse_mode: "HTML"` as the Bot API applies it: the supported tags become entities,
 * `&lt; &gt; &amp; &quot;` and numeric references are decoded, and anything else is an error with
 * the Bot API's wording ("Bad Request: can't parse entities: …"). The result's `text` is what the
 * user sees; the 4096-character limit applies to it.
 */

export interface ParsedEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

export type ParseResult = { ok: true; text: string; entities: ParsedEntity[] } | { ok: false; error: string };

const TAGS: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  code: "code",
  pre: "pre",
  a: "text_link",
  blockquote: "blockquote",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  "tg-emoji": "custom_emoji",
};

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

function byteOffset(src: string, index: number): number {
  return Buffer.byteLength(src.slice(0, index), "utf8");
}

/** Parse Bot API HTML. */
export function parseTelegramHtml(src: string): ParseResult {
  let text = "";
  const entities: ParsedEntity[] = [];
  const stack: Array<{ tag: string; start: number; attrs: Record<string, string> }> = [];
  const fail = (what: string): ParseResult => ({
    ok: false,
    error: `Bad Request: can't parse entities: ${what}`,
  });
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "<") {
      const close = src.indexOf(">", i);
      if (close < 0) return fail(`Unclosed start tag at byte offset ${byteOffset(src, i)}`);
      const raw = src.slice(i + 1, close);
      if (raw.startsWith("/")) {
        const name = raw.slice(1).trim().toLowerCase();
        const top = stack.pop();
        if (!top) return fail(`Unexpected end tag at byte offset ${byteOffset(src, i)}`);
        if (top.tag !== name) return fail(`Can't find end tag corresponding to start tag "${top.tag}"`);
        const type = TAGS[top.tag] ?? top.tag;
        const length = text.length - top.start;
        const parent = stack.at(-1);
        if (type === "code" && parent?.tag === "pre") {
          const lang = /^language-(.+)$/.exec(top.attrs.class ?? "")?.[1];
          if (lang) parent.attrs.language = lang;
        } else if (length > 0) {
          const e: ParsedEntity = { type, offset: top.start, length };
          if (type === "text_link") e.url = top.attrs.href ?? "";
          if (type === "pre" && top.attrs.language) e.language = top.attrs.language;
          entities.push(e);
        }
        i = close + 1;
        continue;
      }
      const m = /^([a-zA-Z][\w-]*)((?:\s+[\w-]+\s*=\s*"[^"]*")*)\s*$/.exec(raw);
      const name = m?.[1]?.toLowerCase();
      if (!m || !name || !(name in TAGS)) {
        return fail(
          `Unsupported start tag "${(raw.split(/\s/)[0] ?? "").slice(0, 20)}" at byte offset ${byteOffset(src, i)}`,
        );
      }
      const attrs: Record<string, string> = {};
      for (const a of (m[2] ?? "").matchAll(/([\w-]+)\s*=\s*"([^"]*)"/g))
        attrs[(a[1] ?? "").toLowerCase()] = decode(a[2] ?? "");
      if (name === "a" && !attrs.href) return fail(`Can't find href attribute in "a" tag`);
      stack.push({ tag: name, start: text.length, attrs });
      i = close + 1;
      continue;
    }
    if (c === "&") {
      const m = /^&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/.exec(src.slice(i, i + 12));
      if (m) {
        const ref = m[1] ?? "";
        if (ref.startsWith("#x")) text += String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
        else if (ref.startsWith("#")) text += String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
        else if (NAMED[ref]) text += NAMED[ref];
        else return fail(`Unsupported HTML entity "&${ref};" at byte offset ${byteOffset(src, i)}`);
        i += m[0].length;
        continue;
      }
    }
    text += c;
    i++;
  }
  const open = stack.pop();
  if (open) return fail(`Can't find end tag corresponding to start tag "${open.tag}"`);
  return { ok: true, text, entities: entities.sort((a, b) => a.offset - b.offset) };
}

function decode(s: string): string {
  return s.replace(/&(lt|gt|amp|quot);/g, (_m, n: string) => NAMED[n] ?? "");
}
