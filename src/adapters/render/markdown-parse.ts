/**
 * A small, forgiving parser for the CommonMark subset LLMs write: fenced code, headings, block
 * quotes, lists, rules, paragraphs; inline code, bold, italic, strikethrough, links. It never fails:
 * anything it does not recognise (unmatched `*`, tables, HTML) stays literal text. Unclosed fences
 * (a reply still streaming) run to the end of the text. The dialect writers in `markdown.ts` walk
 * its output.
 */

export type Inline =
  | { kind: "text"; text: string }
  | { kind: "code"; text: string }
  | { kind: "bold" | "italic" | "strike"; children: Inline[] }
  | { kind: "link"; url: string; children: Inline[] };

export type Block =
  | { kind: "code"; lang: string; text: string }
  | { kind: "heading"; level: number; content: Inline[] }
  | { kind: "quote"; lines: Inline[][] }
  | { kind: "list-item"; marker: string; indent: number; content: Inline[] }
  | { kind: "rule" }
  | { kind: "line"; content: Inline[] }
  | { kind: "blank" };

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;

/** Split text into blocks, one per line except code fences, which keep their lines together. */
export function parseBlocks(text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const l = (lines[j] ?? "").trim();
        if (l.length >= marker.length && l === (marker[0] ?? "`").repeat(l.length)) break;
        body.push(lines[j] ?? "");
      }
      blocks.push({ kind: "code", lang: fence[2] ?? "", text: body.join("\n") });
      i = j;
      continue;
    }
    blocks.push(parseLine(line));
  }
  return blocks;
}

function parseLine(line: string): Block {
  if (line.trim() === "") return { kind: "blank" };
  const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading)
    return { kind: "heading", level: heading[1]?.length ?? 1, content: parseInline(heading[2] ?? "") };
  if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return { kind: "rule" };
  const quote = /^ {0,3}>\s?(.*)$/.exec(line);
  if (quote) return { kind: "quote", lines: [parseInline(quote[1] ?? "")] };
  const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
  if (item) {
    return {
      kind: "list-item",
      indent: (item[1] ?? "").length,
      marker: item[2] ?? "-",
      content: parseInline(item[3] ?? ""),
    };
  }
  return { kind: "line", content: parseInline(line) };
}

const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Parse inline markup. Unmatched delimiters are kept as text. */
function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let text = "";
  const flush = () => {
    if (text) out.push({ kind: "text", text });
    text = "";
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "\\" && i + 1 < src.length && /[\\`*_~[\]()#>!-]/.test(src[i + 1] as string)) {
      text += src[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      let ticks = 1;
      while (src[i + ticks] === "`") ticks++;
      const fence = "`".repeat(ticks);
      const end = src.indexOf(fence, i + ticks);
      if (end > i) {
        flush();
        let code = src.slice(i + ticks, end);
        if (code.startsWith(" ") && code.endsWith(" ") && code.trim()) code = code.slice(1, -1);
        out.push({ kind: "code", text: code });
        i = end + ticks;
        continue;
      }
      text += fence;
      i += ticks;
      continue;
    }
    if (c === "[") {
      const link = matchLink(src, i);
      if (link) {
        flush();
        out.push({ kind: "link", url: link.url, children: parseInline(link.label) });
        i = link.end;
        continue;
      }
    }
    const emphasis = matchEmphasis(src, i);
    if (emphasis) {
      flush();
      out.push({ kind: emphasis.kind, children: parseInline(emphasis.inner) });
      i = emphasis.end;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return out;
}

function matchLink(src: string, start: number): { label: string; url: string; end: number } | undefined {
  let depth = 0;
  let j = start;
  for (; j < src.length; j++) {
    if (src[j] === "[") depth++;
    else if (src[j] === "]") {
      depth--;
      if (depth === 0) break;
    }
  }
  if (depth !== 0 || src[j + 1] !== "(") return undefined;
  const close = src.indexOf(")", j + 2);
  if (close < 0) return undefined;
  const url = src.slice(j + 2, close).trim();
  if (!url || /\s/.test(url)) return undefined;
  return { label: src.slice(start + 1, j), url, end: close + 1 };
}

function matchEmphasis(
  src: string,
  i: number,
): { kind: "bold" | "italic" | "strike"; inner: string; end: number } | undefined {
  const candidates: Array<{ delim: string; kind: "bold" | "italic" | "strike" }> = [
    { delim: "**", kind: "bold" },
    { delim: "__", kind: "bold" },
    { delim: "~~", kind: "strike" },
    { delim: "*", kind: "italic" },
    { delim: "_", kind: "italic" },
  ];
  for (const { delim, kind } of candidates) {
    if (!src.startsWith(delim, i)) continue;
    const after = src[i + delim.length];
    if (isSpace(after) || after === delim[0]) continue;
    // Underscores inside words (snake_case) are not emphasis.
    if (delim[0] === "_" && isWordChar(src[i - 1])) continue;
    let from = i + delim.length + 1;
    for (;;) {
      const end = src.indexOf(delim, from);
      if (end < 0) break;
      const before = src[end - 1];
      const next = src[end + delim.length];
      const okClose =
        !isSpace(before) &&
        next !== delim[0] &&
        !(delim[0] === "_" && isWordChar(next)) &&
        !src.startsWith(delim, end + 1);
      if (okClose) return { kind, inner: src.slice(i + delim.length, end), end: end + delim.length };
      from = end + 1;
    }
  }
  return undefined;
}
