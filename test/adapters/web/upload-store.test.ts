/**
 * The embedded mode's web chat file store keeps a file 30 days after its upload, as Redis does:
 * past that it is not served, and the sweep removes it, leftovers of interrupted uploads and the
 * folders they leave empty, while newer files stay.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DirWebUploadStore, WEB_FILE_TTL_MS } from "../../../src/adapters/web/upload-store.js";

const dir = mkdtempSync(join(tmpdir(), "sb-web-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function* bytes(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text);
}

async function read(store: DirWebUploadStore, conversation: string, id: string): Promise<string | undefined> {
  const got = await store.get(conversation, id);
  if (!got) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of got.body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString();
}

describe("DirWebUploadStore keeps files 30 days", () => {
  it("serves a file within its time, not after; the sweep removes it, leftovers and empty folders, never a newer file", async () => {
    let now = Date.now();
    const store = new DirWebUploadStore(dir, { now: () => now });
    await store.put("cold1", "f1", bytes("old report"), 1000);
    await store.put("cnew1", "f2", bytes("new report"), 1000);
    // An upload that died half way, an hour and more ago.
    writeFileSync(join(dir, "cnew1", "f3.partial-abc123"), "half");
    expect(await read(store, "cold1", "f1")).toBe("old report");

    // 30 days and a minute later every file above is past its time.
    now += WEB_FILE_TTL_MS + 60_000;
    expect(await read(store, "cold1", "f1")).toBeUndefined();
    expect(await store.sweep()).toBe(3);
    expect(existsSync(join(dir, "cold1"))).toBe(false);
    expect(existsSync(join(dir, "cnew1"))).toBe(false);

    // A file within its time stays.
    await store.put("cnew2", "f4", bytes("fresh"), 1000);
    const fresh = new DirWebUploadStore(dir);
    expect(await fresh.sweep()).toBe(0);
    expect(readdirSync(join(dir, "cnew2"))).toEqual(["f4"]);
    expect(await read(fresh, "cnew2", "f4")).toBe("fresh");
  });
});
