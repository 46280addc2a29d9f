/**
 * The `schedules:` section: its defaults, and what a mistake in it gets (each problem named by
 * its field, one sentence on how to fix it); `switchboard check` as a child process refuses a
 * schedule it cannot read the same way.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatIssue, parseConfigText } from "../../src/gateway/config/index.js";
import { switchboard } from "../e2e/support/cli-run.js";

const dir = mkdtempSync(join(tmpdir(), "sb-config-schedules-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (yaml: string) => parseConfigText(yaml, { env: {}, baseDir: dir });

function issues(yaml: string): string[] {
  const r = load(yaml);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.issues.map((i) => formatIssue({ ...i, line: undefined }));
}

describe("schedules", () => {
  it("has defaults, and takes a time zone in any case as its IANA name", () => {
    const r = load("schedules:\n  timeZone: europe/berlin\n");
    if (!r.ok) throw new Error(r.issues.map((i) => formatIssue(i)).join("\n"));
    expect(r.config.schedules).toEqual({
      enabled: true,
      timeZone: "Europe/Berlin",
      missed: "once",
      graceMs: 300_000,
      ifBusy: "queue",
      maxPerThread: 10,
      maxPerUser: 25,
      minIntervalMs: 300_000,
      quietMarker: "NO_REPLY",
      deliveryRetryMs: [60_000, 300_000, 1_800_000, 7_200_000],
      jobs: [],
    });
  });

  it("names each mistake by its field: a zone, a schedule, a repeated id, a thread key, a prompt inside the schedule", () => {
    const out = issues(
      [
        "schedules:",
        "  timeZone: Mars/Olympus",
        "  jobs:",
        "    - { id: a, thread: 'web:x', schedule: 'every 10s', prompt: hi }",
        "    - { id: a, thread: 'slak:T:C:1', schedule: 'every day 09:00', prompt: hi }",
        "    - { id: b, thread: 'web:x', schedule: 'every day 09:00 post the news', prompt: hi }",
      ].join("\n"),
    );
    expect(out[0]).toBe(
      'schedules.timeZone: "Mars/Olympus" is not a time zone: use an IANA name such as Europe/Berlin, America/New_York or UTC',
    );
    expect(out).toContainEqual(expect.stringMatching(/^schedules\.jobs\[0\]\.schedule: .*second/i));
    expect(out).toContain('schedules.jobs[1].id: repeats "a" of schedules.jobs[0]');
    expect(out).toContainEqual(
      expect.stringMatching(/^schedules\.jobs\[1\]\.thread: "slak:T:C:1" is no thread key/),
    );
    expect(out).toContain(
      'schedules.jobs[2].schedule: "every day 09:00 post the news" holds more than when it runs; put what the agent is asked in prompt',
    );
  });

  it("`switchboard check` refuses a schedule it cannot read, naming the field (exit 2, a config problem)", async () => {
    const cwd = mkdtempSync(join(dir, "check-"));
    writeFileSync(
      join(cwd, "switchboard.yaml"),
      "schedules:\n  jobs:\n    - { id: x, thread: 'web:abc', schedule: 'every fortnight', prompt: hi }\n",
    );
    const r = await switchboard(["check", "--offline", "--port", "0"], { cwd });
    expect(r.stdout + r.stderr).toMatch(
      /✗ schedules\.jobs\[0\]\.schedule \(line 3\): "every" needs an interval or days/,
    );
    expect(r.code).toBe(2);
  });
});
