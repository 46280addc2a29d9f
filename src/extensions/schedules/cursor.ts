/**
 * Reading a `/schedule` argument word by word while keeping the rest verbatim: the prompt after the
 * schedule may hold anything (newlines, quotes), so it is sliced from the text, never re-joined.
 */

/**
 * A position in `text`. `peek`/`next` return the next whitespace-separated word (undefined at the
 * end); `rest` is everything after the position, trimmed; saving and restoring `pos` backtracks.
 */
export class Cursor {
  constructor(
    readonly text: string,
    public pos = 0,
  ) {}

  peek(): string | undefined {
    return this.#scan()?.word;
  }

  next(): string | undefined {
    const found = this.#scan();
    if (found) this.pos = found.end;
    return found?.word;
  }

  /** The offset of the next non-space character (text.length at the end). */
  start(): number {
    const word = /\S/g;
    word.lastIndex = this.pos;
    return word.exec(this.text)?.index ?? this.text.length;
  }

  rest(): string {
    return this.text.slice(this.pos).trim();
  }

  #scan(): { word: string; end: number } | undefined {
    const word = /\s*(\S+)/y;
    word.lastIndex = this.pos;
    const match = word.exec(this.text);
    return match?.[1] === undefined ? undefined : { word: match[1], end: word.lastIndex };
  }
}
