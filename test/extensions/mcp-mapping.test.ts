/**
 * What the model sees of MCP tools: names every provider accepts and that never collide, and
 * results mapped to text and pictures under the built-in tools' output cap, nothing dropped without
 * a line saying so.
 */
import { describe, expect, it } from "vitest";
import { MAX_IMAGES, mapCallResult, modelToolName } from "../../src/extensions/mcp/index.js";

const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe("modelToolName", () => {
  it("is <server>_<tool> when that is valid", () => {
    expect(modelToolName("linear", "create_issue")).toBe("linear_create_issue");
    expect(modelToolName("every", "get-tiny-image")).toBe("every_get-tiny-image");
  });

  it("makes other characters _ and keeps names distinct with a hash", () => {
    const a = modelToolName("docs", "search.pages");
    const b = modelToolName("docs", "search/pages");
    expect(a).toMatch(PROVIDER_NAME);
    expect(b).toMatch(PROVIDER_NAME);
    expect(a).toMatch(/^docs_search_pages_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(modelToolName("docs", "search_pages")).toBe("docs_search_pages");
  });

  it("cuts long names to 64 characters, still distinct", () => {
    const long = "x".repeat(80);
    const a = modelToolName("server", `${long}a`);
    const b = modelToolName("server", `${long}b`);
    expect(a).toHaveLength(64);
    expect(a).toMatch(PROVIDER_NAME);
    expect(a).not.toBe(b);
  });
});

describe("mapCallResult", () => {
  const png = Buffer.from("picture").toString("base64");

  it("maps text, pictures, text resources and links; marks errors", () => {
    const r = mapCallResult({
      content: [
        { type: "text", text: "found 2 issues" },
        { type: "image", data: png, mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" },
        },
        { type: "resource_link", uri: "https://tracker/1", name: "Issue 1", description: "the bug" },
      ],
    });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([
      {
        type: "text",
        text: "found 2 issues\nResource file:///notes.md:\n# Notes\nResource link: Issue 1 (the bug) https://tracker/1",
      },
      { type: "image", data: png, mimeType: "image/png" },
    ]);
    expect(mapCallResult({ content: [{ type: "text", text: "no" }], isError: true }).isError).toBe(true);
  });

  it("says what it left out: audio, binary resources, pictures in other formats or past the count", () => {
    const r = mapCallResult({
      content: [
        { type: "audio", data: png, mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///a.zip", mimeType: "application/zip", blob: png } },
        { type: "image", data: png, mimeType: "image/tiff" },
        ...Array.from({ length: MAX_IMAGES + 1 }, () => ({
          type: "image" as const,
          data: png,
          mimeType: "image/jpeg",
        })),
      ],
    });
    const text = r.content[0]?.type === "text" ? r.content[0].text : "";
    expect(text).toContain("[audio (audio/wav, 7 bytes) left out: models here cannot hear]");
    expect(text).toContain("[resource file:///a.zip (application/zip, 7 bytes) left out: not text]");
    expect(text).toContain("[picture (image/tiff, 7 bytes) in a format models cannot read]");
    expect(text).toContain(`left out: more than ${MAX_IMAGES} pictures`);
    expect(r.content.filter((c) => c.type === "image")).toHaveLength(MAX_IMAGES);
  });

  it("keeps the head and tail of long text, saying how much was dropped", () => {
    const r = mapCallResult({ content: [{ type: "text", text: `HEAD${"x".repeat(200_000)}TAIL` }] }, 1000);
    const text = r.content[0]?.type === "text" ? r.content[0].text : "";
    expect(text.startsWith("HEAD")).toBe(true);
    expect(text.endsWith("TAIL")).toBe(true);
    expect(text).toMatch(/\[… \d+ bytes of output omitted …\]/);
    expect(text.length).toBeLessThan(1100);
  });

  it("answers with structured content as JSON when there is nothing else, and never with nothing", () => {
    expect(mapCallResult({ content: [], structuredContent: { total: 3 } }).content).toEqual([
      { type: "text", text: '{\n  "total": 3\n}' },
    ]);
    expect(mapCallResult({ content: [] }).content).toEqual([{ type: "text", text: "(no output)" }]);
  });
});
