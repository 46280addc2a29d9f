/**
 * A small, safe Markdown renderer for the web chat page: code fences, inline code, bold, italics,
 * strike-through, links (http, https and mailto only), headings, lists, quotes and rules. All text
 * is HTML-escaped before any markup is added, so a message can never inject HTML or script. An
 * unclosed code fence (a reply still streaming) renders as code up to the end.
 *
 * Plain browser JavaScript with no dependencies: the page inlines it, and tests import it.
 */

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}

const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** Renders one line's inline markup (the line is raw text). */
export function renderInline(raw) {
  const slots = [];
  const hold = (html) => `\uE000${slots.push(html) - 1}\uE000`;
  let text = String(raw).replace(/\uE000/g, "");
  // Code spans first: nothing inside them is markup.
  text = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_m, _ticks, body) => {
    const inner = body.length > 2 && body.startsWith(" ") && body.endsWith(" ") ? body.slice(1, -1) : body;
    return hold(`<code>${escapeHtml(inner)}</code>`);
  });
  text = escapeHtml(text);
  // [label](url): the url was escaped with the rest, which is what an attribute needs.
  text = text.replace(/\[([^\]]+)\]\(([^\s()]+)\)/g, (whole, label, url) => {
    const decoded = url.replace(/&amp;/g, "&");
    if (!SAFE_URL.test(decoded)) return whole;
    return hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${emphasis(label)}</a>`);
  });
  text = text.replace(/\bhttps?:\/\/(?:(?!&quot;|&#39;|&lt;|&gt;)[^\s<\uE000])+/g, (found) => {
    const url = found.replace(/(?:[.,:;!?)\]]|&amp;)+$/, "");
    const rest = found.slice(url.length);
    return `${hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`)}${rest}`;
  });
  text = emphasis(text);
  const restore = (html) => html.replace(/\uE000(\d+)\uE000/g, (_m, i) => restore(slots[Number(i)]));
  return restore(text);
}

function emphasis(html) {
  return html
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])/g, "$1<em>$2</em>")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^\s*])\*(?![\w*])/g, "$1<em>$2</em>")
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_]|[^\s_])_(?!\w)/g, "$1<em>$2</em>");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])( *\1){2,} *$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** Renders Markdown to HTML that is safe to assign to `innerHTML`. */
export function renderMarkdown(source) {
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      while (i < lines.length) {
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[i]);
        if (close && close[1][0] === marker[0] && close[1].length >= marker.length) break;
        body.push(lines[i]);
        i++;
      }
      i++;
      const lang = fence[2] && /^[\w+#.-]{1,30}$/.test(fence[2]) ? fence[2] : "";
      const label = lang ? ` data-lang="${escapeHtml(lang)}"` : "";
      out.push(`<pre${label}><code>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(6, heading[1].length + 2);
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push("<hr>");
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(QUOTE.exec(lines[i])[1]);
        i++;
      }
      out.push(`<blockquote>${renderMarkdown(inner.join("\n"))}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const ordered = /\d/.test(LIST_ITEM.exec(line)[2]);
      const items = [];
      while (i < lines.length) {
        const item = LIST_ITEM.exec(lines[i]);
        if (item && /\d/.test(item[2]) === ordered) {
          const depth = Math.min(4, Math.floor(item[1].length / 2));
          const cls = depth > 0 ? ` class="depth-${depth}"` : "";
          items.push(`<li${cls}>${renderInline(item[3])}</li>`);
          i++;
        } else if (!item && lines[i].trim() !== "" && /^\s{2,}\S/.test(lines[i]) && items.length > 0) {
          // A continuation line of the previous item.
          items[items.length - 1] = items[items.length - 1].replace(
            /<\/li>$/,
            `<br>${renderInline(lines[i].trim())}</li>`,
          );
          i++;
        } else break;
      }
      const first = ordered ? Number.parseInt(LIST_ITEM.exec(line)[2], 10) : 1;
      const start = ordered && first !== 1 ? ` start="${first}"` : "";
      out.push(ordered ? `<ol${start}>${items.join("")}</ol>` : `<ul>${items.join("")}</ul>`);
      continue;
    }
    const para = [];
    while (
      i < lines.length &&
      lines[i].trim() !== "" &&
      !FENCE.test(lines[i]) &&
      !HEADING.test(lines[i]) &&
      !RULE.test(lines[i]) &&
      !QUOTE.test(lines[i]) &&
      !LIST_ITEM.test(lines[i])
    ) {
      para.push(renderInline(lines[i]));
      i++;
    }
    out.push(`<p>${para.join("<br>")}</p>`);
  }
  return out.join("");
}
