/**
 * Thread keys as directory names, reversibly. Lowercase letters, digits, `-`, `_` and `.` stay
 * (a leading `.` is escaped so no name is hidden, `.` or `..`); an uppercase letter becomes `+`
 * and its lowercase form, so names stay distinct on case-insensitive file systems; every other
 * byte of the UTF-8 form becomes `%XX`. `slack:T1:C2:1712.33` → `slack%3a+t1%3a+c2%3a1712.33`.
 */

const KEEP = /[a-z0-9_.-]/;

export function encodeThreadKey(threadKey: string): string {
  if (threadKey === "") throw new Error("A thread key must not be empty.");
  let out = "";
  for (const ch of threadKey) {
    if (KEEP.test(ch) && !(ch === "." && out === "")) out += ch;
    else if (ch >= "A" && ch <= "Z") out += `+${ch.toLowerCase()}`;
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).padStart(2, "0")}`;
  }
  if (out.length > 240)
    throw new Error(`Thread key is too long for a directory name (${out.length} > 240 characters encoded).`);
  return out;
}

/** The thread key of a directory name made by `encodeThreadKey`; undefined for other names. */
export function decodeThreadKey(name: string): string | undefined {
  if (name === "") return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const ch = name[i] as string;
    if (ch === "%") {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (ch === "+") {
      const next = name[i + 1];
      if (next === undefined || next < "a" || next > "z") return undefined;
      bytes.push(next.toUpperCase().charCodeAt(0));
      i += 1;
    } else if (KEEP.test(ch)) {
      bytes.push(ch.charCodeAt(0));
    } else {
      return undefined;
    }
  }
  const key = Buffer.from(bytes).toString("utf8");
  try {
    return encodeThreadKey(key) === name ? key : undefined;
  } catch {
    return undefined;
  }
}
