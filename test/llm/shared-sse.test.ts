import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSSE, type SSEEvent } from "../../src/agent/llm/providers/shared/sse.js";

/** A body that delivers `bytes` in the given pieces, one read each. */
function bodyOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const bounds = [
    0,
    ...[...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b),
    bytes.length,
  ];
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= bounds.length - 1) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(bounds[i], bounds[i + 1]));
      i++;
    },
  });
}

async function collect(stream: AsyncIterable<SSEEvent>): Promise<SSEEvent[]> {
  const out: SSEEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const wire =
  'event: content_block_delta\ndata: {"text":"héllo 👋 wörld"}\n\n' +
  ": a comment\n\n" +
  'data: {"a":"日本語"}\n\n' +
  "event: multi\ndata: line one\ndata: line two\nid: 7\n\n" +
  "data: [DONE]\n\n";
const expected: SSEEvent[] = [
  { event: "content_block_delta", data: '{"text":"héllo 👋 wörld"}' },
  { data: '{"a":"日本語"}' },
  { event: "multi", data: "line one\nline two", id: "7" },
  { data: "[DONE]" },
];

describe("parseSSE", () => {
  it("frames events and keeps multibyte characters intact when a chunk splits one", async () => {
    const bytes = new TextEncoder().encode(wire);
    // Cut inside "👋" (4 bytes), which also lies inside the JSON string of the first event.
    const emoji = Buffer.from(wire).indexOf(Buffer.from("👋"));
    expect(await collect(parseSSE(bodyOf(bytes, [emoji + 1, emoji + 2, emoji + 3])))).toEqual(expected);
  });

  it("gives the same events for every way of splitting the bytes", async () => {
    const bytes = new TextEncoder().encode(wire);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 30 }),
        async (cuts) => {
          expect(await collect(parseSSE(bodyOf(bytes, cuts)))).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("drops an event the connection cut off before its blank line", async () => {
    const bytes = new TextEncoder().encode('data: {"complete":1}\n\ndata: {"cut');
    expect(await collect(parseSSE(bodyOf(bytes, [])))).toEqual([{ data: '{"complete":1}' }]);
  });

  it("throws an abort error and cancels the body when the signal aborts mid-stream", async () => {
    const controller = new AbortController();
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("data: first\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const e of parseSSE(body, controller.signal)) {
          seen.push(e.data);
          controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toEqual(["first"]);
    expect(cancelled).toBe(true);
  });
});
