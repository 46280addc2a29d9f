/** Reading a pi session JSONL file for `switchboard import`. */

/** Parses a JSONL session file; issues name the line. */
export function parseSessionFile(text: string): { entries: Record<string, unknown>[]; problems: string[] } {
  const entries: Record<string, unknown>[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const value: unknown = JSON.parse(line);
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        problems.push(`line ${i + 1}: not a JSON object`);
      } else entries.push(value as Record<string, unknown>);
    } catch {
      problems.push(`line ${i + 1}: not valid JSON`);
    }
  });
  if (problems.length === 0 && entries[0]?.type !== "session") {
    problems.push('line 1: expected the session header ({"type":"session",...}); is this a pi session file?');
  }
  return { entries, problems };
}
