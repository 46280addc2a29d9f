/**
 * A file's type from its bytes, never from its name or what the platform claims: `file-type` reads
 * the signature of binary formats (PNG, JPEG, PDF, ZIP, …); text has none, so a file whose start
 * decodes as UTF-8 without NUL bytes is text, and its extension only picks among the text types.
 */
import { open } from "node:fs/promises";
import { fileTypeFromFile } from "file-type";

/** What the bytes say a file is. */
export interface SniffedType {
  /** `image/png`, `text/csv`, … ; `application/octet-stream` when nothing is known. */
  mimeType: string;
  /** The usual extension of that type, without a dot (`png`), when one is known. */
  ext?: string;
  /** Plain text (UTF-8 without NUL bytes in its first 8 KB). */
  text: boolean;
}

/** Pictures a model may be shown (the types every provider accepts, or that are converted). */
export const PICTURE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const TEXT_TYPES: Record<string, string> = {
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  md: "text/markdown",
  html: "text/html",
  htm: "text/html",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
};

const HEAD_BYTES = 8192;

async function head(path: string): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Whether `bytes` (a file's start, possibly cut inside a character) read as UTF-8 text. */
function isText(bytes: Buffer, whole: boolean): boolean {
  if (bytes.includes(0)) return false;
  // A cut at the end may split one character (up to 3 bytes of it).
  for (let cut = 0; cut <= (whole ? 0 : 3) && cut < bytes.length + 1; cut++) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, bytes.length - cut));
      return true;
    } catch {}
  }
  return false;
}

/** The type of the file at `path` (`name`: its safe name, for the extension of text files). */
export async function sniffType(path: string, name: string, sizeBytes: number): Promise<SniffedType> {
  const found = await fileTypeFromFile(path);
  if (found) return { mimeType: found.mime, ext: found.ext, text: false };
  const start = await head(path);
  if (start.length === 0) return { mimeType: "text/plain", text: true };
  if (isText(start, sizeBytes <= HEAD_BYTES)) {
    const ext = name.includes(".") ? (name.split(".").pop() ?? "").toLowerCase() : "";
    return { mimeType: TEXT_TYPES[ext] ?? "text/plain", ...(ext ? { ext } : {}), text: true };
  }
  return { mimeType: "application/octet-stream", text: false };
}
