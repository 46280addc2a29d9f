/**
 * What the ingest makes of a message's attachments, as the formatter reads it: each file with where
 * it landed in the workspace, its type from its bytes, and the picture the model is shown (or why a
 * file was not taken).
 */
import type { InboundMessage } from "../../adapters/types.js";
import type { ImageContent } from "../../agent/llm/types.js";

/** One attachment after the ingest. */
export interface IngestedFile {
  /** The name the person gave it (or the platform's kind, `photo`). */
  name: string;
  /** Where it is, relative to the workspace root (`attachments/<message>/<safe name>`); absent: not taken. */
  path?: string;
  sizeBytes?: number;
  /** The type its bytes say it is. */
  mimeType?: string;
  /** The picture the model sees (models with image input). */
  image?: ImageContent;
  /** What the vision model saw in the picture (models without image input, `models.vision` set). */
  description?: string;
  /** Why it was not taken (`larger than the 20 MB per file this channel takes`). */
  refused?: string;
}

/** An inbound message after the ingest: its files as they came out (absent: nothing was done). */
export type IngestedMessage = InboundMessage & { files?: IngestedFile[] };
