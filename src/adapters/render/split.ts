/**
 * Splitting long markdown into messages under a platform's length limit.
 *
 * Parts break at paragraph boundaries where possible, then at line boundaries, then at spaces, and
 * only as a last resort inside a word. A code fence is never broken unless it alone is longer than
 * the limit; then it is cut at line boundaries and each part closes the fence and the next reopens
 * it with the same info string, so every part renders as code. Splitting is a pure function of the text, so
 * a streaming renderer can split every frame again and edit only the parts that changed.
 */

interface Piece {
  /** Separator before this piece in the source (blank lines or a newline). */
  sep: string;
  text: string;
  /** For a code fence: its opening line and closing marker. */
  fence?: { open: string; close: string; body: string; closed: boolean };
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** Cut `text` into blocks: runs of text lines separated by blank lines, and whole code fences. */
function pieces(text: string): Piece[] {
  const lines = text.split("\n");
  const out: Piece[] = [];
  let blanks = 0;
  let para: string[] = [];
  let paraSep = "";
  const sepBefore = () => (out.length === 0 ? "" : blanks > 0 ? "\n\n" : "\n");
  const endPara = () => {
    if (para.length) out.push({ sep: paraSep, text: para.join("\n") });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence && !(fence[1]?.startsWith("`") && (fence[2] ?? "").includes("`"))) {
      endPara();
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      let j = i + 1;
      let closed = false;
      for (; j < lines.length; j++) {
        const t = (lines[j] ?? "").trim();
        if (t.length >= marker.length && t === (marker[0] ?? "`").repeat(t.length)) {
          closed = true;
          break;
        }
        body.push(lines[j] ?? "");
      }
      const close = closed ? (lines[j] ?? marker).trim() : marker;
      const whole = lines.slice(i, closed ? j + 1 : j).join("\n");
      out.push({
        sep: sepBefore(),
        text: whole,
        fence: { open: line, close, body: body.join("\n"), closed },
      });
      blanks = 0;
      i = j;
      continue;
    }
    if (line.trim() === "") {
      endPara();
      blanks++;
      continue;
    }
    if (!para.length) {
      paraSep = sepBefore();
      blanks = 0;
    }
    para.push(line);
  }
  endPara();
  return out;
}

/**
 * Split `text` into parts of at most `limit` characters (UTF-16 code units, as Telegram and
 * JavaScript count). Throws for a limit too small to hold a fence marker pair (programmer error).
 */
export function splitMessage(text: string, limit: number): string[] {
  if (limit < 20) throw new Error(`splitMessage: limit ${limit} is too small; use at least 20 characters.`);
  if (text.length <= limit) return [text];
  const parts: string[] = [];
  let cur = "";
  for (const p of pieces(text)) {
    const joined = cur ? cur + p.sep + p.text : p.text;
    if (joined.length <= limit) {
      cur = joined;
      continue;
    }
    if (cur) parts.push(cur);
    cur = "";
    if (p.text.length <= limit) {
      cur = p.text;
      continue;
    }
    const split = p.fence ? splitFence(p.fence, limit) : splitLines(p.text, limit);
    parts.push(...split.slice(0, -1));
    cur = split[split.length - 1] ?? "";
  }
  if (cur) parts.push(cur);
  return parts;
}

/** Pack lines greedily; a line longer than the limit is cut at a space, or hard. */
function splitLines(text: string, limit: number): string[] {
  const out: string[] = [];
  let cur = "";
  for (const line of text.split("\n")) {
    const joined = cur ? `${cur}\n${line}` : line;
    if (joined.length <= limit) {
      cur = joined;
      continue;
    }
    if (cur) out.push(cur);
    cur = "";
    let rest = line;
    while (rest.length > limit) {
      const cut = cutPoint(rest, limit);
      out.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).trimStart();
    }
    cur = rest;
  }
  if (cur) out.push(cur);
  return out;
}

/** Where to cut a line that is too long: the last space in the second half, else the limit. */
function cutPoint(line: string, limit: number): number {
  const space = line.lastIndexOf(" ", limit);
  if (space > limit / 2) return space;
  // Never split a surrogate pair.
  const code = line.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** Cut a fence longer than the limit into fences that each fit. */
function splitFence(f: NonNullable<Piece["fence"]>, limit: number): string[] {
  const open = f.open.length + 1 > limit / 2 ? f.open.slice(0, 3) : f.open;
  const close = f.close;
  const budget = limit - open.length - close.length - 2;
  const bodies = splitLines(f.body, Math.max(1, budget));
  return bodies.map((b, i) => {
    const last = i === bodies.length - 1;
    return last && !f.closed ? `${open}\n${b}` : `${open}\n${b}\n${close}`;
  });
}
