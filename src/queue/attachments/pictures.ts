/**
 * A picture as a model is shown it: within what every provider accepts without scaling it again
 * itself (Anthropic's 1568 px on the long edge and about 1.15 megapixels, which also keeps OpenAI's
 * and Google's tile counts low), in a format all of them take (PNG, JPEG or WebP; a GIF becomes a
 * PNG of its first frame, which Google needs), and small enough to keep inline in the session
 * (at most 3.75 MB, Anthropic's 5 MB of base64). The original stays in the workspace.
 *
 * sharp (libvips) is loaded on first use, so a process that never sees a picture never maps it.
 */
import { readFile } from "node:fs/promises";
import type { ImageContent } from "../../agent/llm/types.js";

/** The limits a picture is brought within. */
const PICTURE_LIMITS = {
  maxEdge: 1568,
  maxPixels: 1_150_000,
  maxBytes: 3_750_000,
  /** Larger inputs are refused before decoding (a decompression bomb). */
  maxInputPixels: 100_000_000,
} as const;

/** A picture ready for the model. */
export interface ModelPicture {
  image: ImageContent;
  width: number;
  height: number;
  /** Scaled down or converted (false: the original bytes). */
  changed: boolean;
}

type Sharp = typeof import("sharp").default;
let sharpModule: Promise<Sharp> | undefined;
function loadSharp(): Promise<Sharp> {
  sharpModule ??= import("sharp").then((m) => m.default);
  return sharpModule;
}

/**
 * `path` (a PNG, JPEG, GIF or WebP by its bytes: `mimeType`) brought within `PICTURE_LIMITS`.
 * Rejects when the file is not a picture sharp can read, or is larger than 100 megapixels.
 */
export async function pictureForModel(
  path: string,
  mimeType: string,
  sizeBytes: number,
): Promise<ModelPicture> {
  const sharp = await loadSharp();
  const input = () =>
    sharp(path, { limitInputPixels: PICTURE_LIMITS.maxInputPixels, animated: false, failOn: "error" });
  const meta = await input().metadata();
  const turned = (meta.orientation ?? 1) >= 5;
  const width = (turned ? meta.height : meta.width) ?? 0;
  const height = (turned ? meta.width : meta.height) ?? 0;
  if (width <= 0 || height <= 0) throw new Error("the picture has no size");
  const scale = Math.min(
    1,
    PICTURE_LIMITS.maxEdge / Math.max(width, height),
    Math.sqrt(PICTURE_LIMITS.maxPixels / (width * height)),
  );
  const upright = (meta.orientation ?? 1) === 1;
  if (scale === 1 && upright && mimeType !== "image/gif" && sizeBytes <= PICTURE_LIMITS.maxBytes) {
    const data = await readFile(path);
    return {
      image: { type: "image", data: data.toString("base64"), mimeType },
      width,
      height,
      changed: false,
    };
  }
  const w = Math.max(1, Math.floor(width * scale));
  const h = Math.max(1, Math.floor(height * scale));
  const resized = () => input().rotate().resize({ width: w, height: h, fit: "fill" });
  const lossless = mimeType === "image/png" || mimeType === "image/gif";
  let out: Buffer | undefined;
  let outType = "image/jpeg";
  if (lossless) {
    out = await resized().png({ compressionLevel: 9 }).toBuffer();
    outType = "image/png";
  }
  for (const quality of [85, 70, 50]) {
    if (out && out.length <= PICTURE_LIMITS.maxBytes) break;
    out = await resized().flatten({ background: "#ffffff" }).jpeg({ quality, mozjpeg: true }).toBuffer();
    outType = "image/jpeg";
  }
  const data = out as Buffer;
  return {
    image: { type: "image", data: data.toString("base64"), mimeType: outType },
    width: w,
    height: h,
    changed: true,
  };
}
