/**
 * An MCP tool result as the agent's tool result: text as text, pictures as images, embedded text
 * resources as text, everything else described in a line, under the same output cap as the
 * built-in tools (the head and the tail of the text kept, the middle counted).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageContent, TextContent } from "../../agent/llm/types.js";
import { HeadTailBuffer } from "../tools/output-buffer.js";

/** Text kept per result, as for `bash`. */
const MAX_RESULT_TEXT_BYTES = 50_000;
/** Largest picture passed on (providers refuse larger ones), as base64 characters. */
const MAX_IMAGE_BASE64 = 5 * 1024 * 1024;
/** Pictures passed on per result. */
export const MAX_IMAGES = 4;

/** The agent-side content of one MCP result, and whether the server marked it an error. */
export interface MappedResult {
  content: (TextContent | ImageContent)[];
  isError: boolean;
  /** The text alone (for an error's message). */
  text: string;
}

const base64Bytes = (data: string) =>
  Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);

function isPicture(mimeType: string | undefined): mimeType is string {
  return typeof mimeType === "string" && /^image\/(png|jpeg|gif|webp)$/i.test(mimeType);
}

/** Maps `result` (as the SDK validated it); unknown block types are described, never dropped silently. */
export function mapCallResult(result: CallToolResult, maxTextBytes = MAX_RESULT_TEXT_BYTES): MappedResult {
  const text = new HeadTailBuffer(maxTextBytes);
  const images: ImageContent[] = [];
  const say = (line: string) => text.push(Buffer.from(text.total > 0 ? `\n${line}` : line, "utf8"));
  const picture = (data: string, mimeType: string, what: string) => {
    if (images.length >= MAX_IMAGES)
      say(`[${what} (${mimeType}) left out: more than ${MAX_IMAGES} pictures]`);
    else if (data.length > MAX_IMAGE_BASE64)
      say(`[${what} (${mimeType}, ${base64Bytes(data)} bytes) left out: larger than 5 MB]`);
    else images.push({ type: "image", data, mimeType });
  };
  for (const block of result.content ?? []) {
    switch (block.type) {
      case "text":
        say(block.text);
        break;
      case "image":
        if (isPicture(block.mimeType)) picture(block.data, block.mimeType, "picture");
        else
          say(
            `[picture (${block.mimeType}, ${base64Bytes(block.data)} bytes) in a format models cannot read]`,
          );
        break;
      case "audio":
        say(
          `[audio (${block.mimeType}, ${base64Bytes(block.data)} bytes) left out: models here cannot hear]`,
        );
        break;
      case "resource": {
        const r = block.resource;
        if ("text" in r && typeof r.text === "string") say(`Resource ${r.uri}:\n${r.text}`);
        else if ("blob" in r && isPicture(r.mimeType)) picture(r.blob, r.mimeType, `resource ${r.uri}`);
        else {
          const size = "blob" in r && typeof r.blob === "string" ? `, ${base64Bytes(r.blob)} bytes` : "";
          say(`[resource ${r.uri} (${r.mimeType ?? "binary"}${size}) left out: not text]`);
        }
        break;
      }
      case "resource_link":
        say(`Resource link: ${block.name}${block.description ? ` (${block.description})` : ""} ${block.uri}`);
        break;
      default:
        say(`[content of type ${JSON.stringify((block as { type?: unknown }).type)} left out]`);
    }
  }
  // A server answering only with structured content still answers.
  if (text.total === 0 && images.length === 0 && result.structuredContent !== undefined)
    say(JSON.stringify(result.structuredContent, null, 2));
  const body = text.text();
  const isError = result.isError === true;
  const content: (TextContent | ImageContent)[] = [];
  if (body.length > 0 || images.length === 0) content.push({ type: "text", text: body || "(no output)" });
  content.push(...images);
  return { content, isError, text: body };
}
