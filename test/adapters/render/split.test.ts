import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessage } from "../../../src/adapters/render/split.js";

const para = (n: number, ch = "a") => `${ch.repeat(n - 1)}.`;

describe("splitMessage", () => {
  it("keeps a short text whole", () => {
    expect(splitMessage("hello\n\nworld", 100)).toEqual(["hello\n\nworld"]);
  });

  it("splits 5,000 characters of paragraphs at paragraph boundaries under the limit", () => {
    const paragraphs = Array.from({ length: 10 }, (_, i) => para(500, String.fromCharCode(97 + i)));
    const text = paragraphs.join("\n\n");
    expect(text.length).toBeGreaterThan(5000);
    const parts = splitMessage(text, 4096);
    expect(parts).toHaveLength(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(4096);
    // No paragraph is cut: every part is a run of whole paragraphs.
    expect(parts.join("\n\n")).toBe(text);
  });

  it("falls back to line boundaries, then spaces, for one huge paragraph", () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(30)}`);
    const parts = splitMessage(lines.join("\n"), 1000);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(1000);
    expect(parts.join("\n")).toBe(lines.join("\n"));
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    const wparts = splitMessage(words, 500);
    for (const p of wparts) expect(p.length).toBeLessThanOrEqual(500);
    expect(wparts.join(" ")).toBe(words);
  });

  it("never cuts inside a code fence that fits on its own", () => {
    const code = ["```ts", ...Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`), "```"].join("\n");
    const text = `${"intro ".repeat(100)}\n\n${code}\n\nafter`;
    const parts = splitMessage(text, 700);
    const withFence = parts.filter((p) => p.includes("```"));
    expect(withFence).toHaveLength(1);
    expect(withFence[0]).toContain(code);
  });

  it("closes and reopens a fence longer than the limit, keeping the language", () => {
    const body = Array.from({ length: 300 }, (_, i) => `print(${i})`);
    const text = ["```python", ...body, "```"].join("\n");
    const parts = splitMessage(text, 500);
    expect(parts.length).toBeGreaterThan(3);
    const recovered: string[] = [];
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(500);
      expect(p.startsWith("```python\n")).toBe(true);
      expect(p.endsWith("\n```")).toBe(true);
      recovered.push(...p.split("\n").slice(1, -1));
    }
    expect(recovered).toEqual(body);
  });

  it("every part fits and no non-space character is lost, for any text", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom("\n", "\n\n", "```\n", " ", "`"), fc.string({ maxLength: 80 })), {
          maxLength: 60,
        }),
        fc.integer({ min: 40, max: 300 }),
        (chunks, limit) => {
          const text = chunks.join("");
          const parts = splitMessage(text, limit);
          for (const p of parts) expect(p.length).toBeLessThanOrEqual(limit);
          const squash = (s: string) => s.replace(/\s|`/g, "");
          expect(squash(parts.join(""))).toBe(squash(text));
        },
      ),
      { numRuns: 300 },
    );
  });
});
