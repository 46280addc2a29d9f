/**
 * How a message's files read in the user message the model gets: one line per file after the text,
 * naming where it is in the workspace (tools read it there), its type and size, or why it was not
 * taken; pictures the model can see follow the text as image parts, in the same order.
 */
import type { InboundMessage } from "../../adapters/types.js";
import type { ImageContent } from "../../agent/llm/types.js";
import { formatBytes } from "./limits.js";
import { PICTURE_TYPES } from "./sniff.js";
import type { IngestedFile, IngestedMessage } from "./types.js";

/** The line naming one file. */
function fileLine(f: IngestedFile): string {
  if (!f.path)
    return `[file not taken: ${f.name}${f.sizeBytes !== undefined ? ` (${formatBytes(f.sizeBytes)})` : ""}: ${f.refused ?? "unknown reason"}]`;
  const picture = f.mimeType !== undefined && PICTURE_TYPES.has(f.mimeType);
  const what = `${picture ? "picture" : "file"}: ${f.name} (${f.mimeType ?? "unknown type"}, ${formatBytes(f.sizeBytes ?? 0)}) at ${f.path}`;
  if (f.image) return `[${what}; shown below]`;
  if (f.description)
    return `[${what}; you cannot see pictures, so here is a description of it:\n${f.description}]`;
  if (picture) return `[${what}; the current model cannot see pictures]`;
  return `[${what}]`;
}

/**
 * The lines naming `message`'s attachments and the pictures to show. A message the ingest did not
 * see (no `files`) names its attachments only (`[attachment: report.pdf]`).
 */
export function attachmentContent(message: InboundMessage): { lines: string[]; images: ImageContent[] } {
  const files = (message as IngestedMessage).files;
  if (!files)
    return { lines: message.attachments.map((a) => `[attachment: ${a.name ?? a.kind}]`), images: [] };
  return {
    lines: files.map(fileLine),
    images: files.flatMap((f) => (f.image ? [f.image] : [])),
  };
}
