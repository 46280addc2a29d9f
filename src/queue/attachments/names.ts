/**
 * Where an attachment lands in the thread's workspace: `attachments/<message>/<safe name>`. Both
 * parts are made safe for any file system and shell (no separators, no leading dot, no control or
 * shell-special characters) and stay stable, so a message delivered again writes the same paths.
 */

/** The folder under the workspace that attachments go to. */
export const ATTACHMENTS_DIR = "attachments";

const MAX_NAME = 100;

function clean(text: string): string {
  return (
    text
      .normalize("NFC")
      // Control characters, path separators and what shells and globs treat specially.
      .replace(/[\p{Cc}\p{Cf}/\\:*?"<>|$`'!;&(){}[\]#~%]+/gu, "_")
      .replace(/\s+/g, " ")
      .trim()
      .replace(/^[.\s_-]+/, "")
  );
}

/**
 * A file name safe to write: the last path component of `name`, cleaned, at most 100 characters
 * with its extension kept; `fallback` (e.g. `file-1.png`) when nothing usable is left.
 */
export function safeFileName(name: string | undefined, fallback: string): string {
  const last = (name ?? "").split(/[/\\]/).pop() ?? "";
  let safe = clean(last).replace(/ /g, "_");
  if (!safe || safe === "." || safe === "..") return fallback;
  if (safe.length > MAX_NAME) {
    const dot = safe.lastIndexOf(".");
    const ext = dot > 0 && safe.length - dot <= 12 ? safe.slice(dot) : "";
    safe = safe.slice(0, MAX_NAME - ext.length) + ext;
  }
  return safe;
}

/**
 * The folder name of one chat message: its reference without the platform prefix, cleaned
 * (`slack:T1:C2:1712.33` → `T1_C2_1712.33`), so two messages never share a folder.
 */
export function messageDirName(messageId: string, fallback: string): string {
  const withoutPlatform = messageId.replace(/^[a-z]+:/, "");
  const safe = clean(withoutPlatform).replace(/ /g, "_").slice(-80);
  return safe || fallback;
}

/** `name`, or `name` with `-2`, `-3`, … before its extension when `taken` has it already. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  const dot = name.lastIndexOf(".");
  const [base, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let i = 2; ; i++) {
    const candidate = `${base}-${i}${ext}`;
    if (!taken.has(candidate)) return candidate;
  }
}
