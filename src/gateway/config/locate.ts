/**
 * Where in the YAML file a problem is: the line of a field named by its config path
 * (`models.custom[0].api` → line 10), and YAML syntax errors as a line, a column, the offending
 * lines and a hint, so people find the spot without counting.
 */
import { type Document, isMap, isPair, isScalar, isSeq, type LineCounter, type YAMLError } from "yaml";
import type { ConfigIssue } from "./errors.js";

/** 1-based line and column in the config file. */
export interface SourceLocation {
  line: number;
  column: number;
}

/** Finds the location of a config path (`a.b[2]["c d"]`), or undefined when it is not in the file. */
export type PathLocator = (path: string) => SourceLocation | undefined;

/** `a.b[2]["c d"]` → `["a", "b", 2, "c d"]` (the inverse of `joinPath`). */
function splitPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;
  for (const m of path.matchAll(re)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(JSON.parse(m[3]) as string);
  }
  return out;
}

/**
 * A locator over a parsed document: the line of the deepest part of the path that is in the file
 * (a missing field points at its parent; an unknown field at its key). Keys merged in with `<<`
 * are not followed; such a path points at the mapping that merges them.
 */
export function pathLocator(doc: Document, counter: LineCounter): PathLocator {
  return (path) => {
    let node: unknown = doc.contents;
    let offset: number | undefined;
    for (const segment of splitPath(path)) {
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
        );
        if (!pair || !isScalar(pair.key)) break;
        offset = pair.key.range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === "number") {
        const item = node.items[segment] as { range?: [number, number, number] } | undefined;
        if (!item) break;
        offset = item.range?.[0] ?? offset;
        node = item;
      } else break;
    }
    if (offset === undefined) return undefined;
    const { line, col } = counter.linePos(offset);
    return { line, column: col };
  };
}

const HINTS: Record<string, string> = {
  BAD_INDENT: "indent every key of one mapping (and every `-` item of one list) by the same number of spaces",
  TAB_AS_INDENT: "indent with spaces; YAML does not allow tabs",
  BLOCK_AS_IMPLICIT_KEY: 'a value that contains ": " must be quoted, e.g. key: "a: b"',
  MISSING_CHAR: "a quote or bracket is not closed",
  DUPLICATE_KEY: "each key may appear only once in a mapping",
  MULTIPLE_DOCS: "the config is one YAML document; remove the `---` separator",
  UNEXPECTED_TOKEN: "check the quoting and indentation of this line",
};

/**
 * One issue for a file with YAML syntax errors: the first error with its line, column, the lines
 * around it and a hint. Later errors usually follow from the first (one bad indent confuses the
 * parser for the rest of the block), so they are counted, not listed.
 */
export function yamlSyntaxIssue(errors: readonly YAMLError[], text: string): ConfigIssue {
  const first = errors[0] as YAMLError;
  const what = first.message.split(" at line ")[0]?.trim() ?? first.message;
  const pos = first.linePos?.[0];
  const hint = /end with an? [\]}]/.test(what)
    ? "a [ or { opened here or above is not closed"
    : HINTS[first.code];
  const more =
    errors.length > 1
      ? ` (${errors.length - 1} more YAML ${errors.length === 2 ? "error follows" : "errors follow"} from here; fix this one first)`
      : "";
  const message = `YAML syntax: ${what}${hint ? `; ${hint}` : ""}${more}`;
  if (!pos) return { path: "", message };
  const lines = text.split(/\r?\n/);
  const excerpt: string[] = [];
  const width = String(pos.line).length;
  const show = (n: number) => `${String(n).padStart(width)} | ${lines[n - 1] ?? ""}`;
  if (pos.line > 1) excerpt.push(show(pos.line - 1));
  excerpt.push(show(pos.line));
  excerpt.push(`${" ".repeat(width)} | ${" ".repeat(Math.max(0, pos.col - 1))}^`);
  return { path: "", message, line: pos.line, column: pos.col, excerpt };
}
