/**
 * What the web chat keeps of text a person typed: visible characters. Control characters (NUL, ESC
 * of a pasted terminal log, BEL…) are made visible as their Unicode control pictures (`␀`, `␛`),
 * so the page, the agent and the session show the same thing and nothing is silently dropped; a
 * lone UTF-16 surrogate (a broken paste) becomes `�`. Tab, line feed and carriage return stay. A
 * conversation's title also loses the bidirectional overrides that could make it read as another.
 */

/** C0 controls but tab, line feed and carriage return; DEL; the C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/g;

/** The visible picture of control character `c`: U+2400 + code for C0, `␡` for DEL, `�` for C1. */
function pictureOf(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return "\ufffd";
}

/** `text` with every control character made visible and every lone surrogate replaced (see the header). */
export function visibleText(text: string): string {
  return text.replace(LONE_SURROGATE, "\ufffd").replace(CONTROL, pictureOf);
}

/**
 * A conversation title from any source (typed, imported, asked for): visible, on one line, without
 * bidirectional overrides; undefined when nothing is left.
 */
export function titleText(text: string): string | undefined {
  const line = visibleText(text).replace(BIDI_CONTROL, "").replace(/\s+/g, " ").trim();
  return line === "" ? undefined : line;
}
