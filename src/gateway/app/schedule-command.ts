/**
 * `/schedule`: scheduled prompts from chat. `/schedule <when> <prompt>` makes one in the
 * conversation it is typed in (`in 2h …`, `at 17:30 …`, `every weekday 09:00 Europe/Berlin …`,
 * `every 6h …`, `cron "0 9 * * 1-5" …`); `list` shows the conversation's schedules with their next
 * runs and how the last one went; `pause`, `resume` and `rm` take an id. Making, pausing, resuming
 * and removing follow the channel's settings policy (admins in channels, everyone in DMs);
 * anyone may list. docs/scheduling.md is the user's guide.
 */
import type { Platform } from "../../adapters/types.js";
import { atChannelTopLevel, notAtTopLevel } from "../../extensions/commands/channel-top.js";
import { guardCommand } from "../../extensions/commands/guard.js";
import { formatInstant, parseSchedule } from "../../extensions/schedules/index.js";
import type { ExtensionCommandContext, ExtensionFactory } from "../../extensions/types.js";
import type { ScheduleService } from "../../queue/schedules/schedule-service.js";
import type { ScheduleRecord, ScheduleRun } from "../../queue/schedules/types.js";

const USAGE = [
  "Usage:",
  "• /schedule in 2h <prompt> · /schedule at 17:30 <prompt> · /schedule at 2026-12-24 09:00 <prompt>",
  "• /schedule every weekday 09:00 [Europe/Berlin] <prompt> · /schedule every 6h <prompt>",
  '• /schedule cron "0 9 * * 1-5" [zone] <prompt>',
  "• /schedule list · /schedule pause <id> · /schedule resume <id> · /schedule rm <id>",
].join("\n");

const RUN_WORDS: Record<ScheduleRun["status"], string> = {
  queued: "queued",
  answered: "answered",
  quiet: "nothing to report",
  failed: "failed",
  skipped: "skipped",
};

/** One schedule as `list` shows it. */
function describe(r: ScheduleRecord, next: number[]): string {
  const prompt = r.prompt.length > 60 ? `${r.prompt.slice(0, 59)}…` : r.prompt;
  const head = `• \`${r.id}\` ${r.description}: “${prompt.replace(/\s+/g, " ")}”`;
  const lines = [head];
  if (r.paused) lines.push(`  ⏸️ paused${r.pausedReason ? `: ${r.pausedReason}` : ""}`);
  else if (next[0] !== undefined) lines.push(`  next: ${formatInstant(next[0], r.spec.tz)}`);
  const run = r.lastRun;
  if (run) {
    const delivery =
      run.delivery === "owed"
        ? ", its answer not posted yet (retrying)"
        : run.delivery === "shown"
          ? ", posted"
          : "";
    const detail = run.detail ? ` (${run.detail})` : "";
    lines.push(
      `  last: ${formatInstant(run.occurrence, r.spec.tz)}, ${RUN_WORDS[run.status]}${detail}${delivery}`,
    );
  }
  if (r.missed > 0) lines.push(`  missed while nothing ran: ${r.missed}`);
  return lines.join("\n");
}

/** The `schedules` extension: `/schedule` on `service`. */
export function createScheduleExtension(service: ScheduleService): ExtensionFactory {
  return (api) => {
    api.registerCommand("schedule", {
      description:
        "Run a prompt here on a schedule (in 2h, every weekday 09:00, cron …); list, pause, resume, rm",
      usage: "<when> <prompt> | list | pause <id> | resume <id> | rm <id>",
      aliases: ["schedules"],
      handler: guardCommand("change the schedules", (args, ctx) => scheduleCommand(service, args, ctx)),
    });
  };
}

async function scheduleCommand(
  service: ScheduleService,
  args: string,
  ctx: ExtensionCommandContext,
): Promise<void> {
  const [word = "", ...rest] = args.trim().split(/\s+/);
  const verb = word.toLowerCase();
  const threadKey = ctx.thread.threadKey;
  if (verb === "" || verb === "help") return ctx.reply(USAGE);
  if (verb === "list" || verb === "ls") {
    const records = atChannelTopLevel(ctx) ? [] : await service.list(threadKey);
    if (records.length === 0) return ctx.reply(`No schedules in this conversation.\n${USAGE}`);
    return ctx.reply(
      [`Schedules here (${records.length}):`, ...records.map((r) => describe(r, service.nextOf(r, 1)))].join(
        "\n",
      ),
    );
  }
  if (atChannelTopLevel(ctx))
    return ctx.reply(
      notAtTopLevel("/schedule", "Nothing scheduled", "runs its prompt in the conversation it is typed in"),
    );
  if (!ctx.mayChangeSettings())
    return ctx.reply(
      "Only an admin may make or change schedules in this channel (everyone may in a direct message).",
    );
  if (["pause", "resume", "rm", "remove", "delete", "cancel"].includes(verb)) {
    const id = rest[0] ?? "";
    if (id === "" || rest.length > 1)
      return ctx.reply(`Usage: /schedule ${verb} <id> (the id /schedule list shows).`);
    if (verb === "pause") {
      const r = await service.pause(id, threadKey);
      return ctx.reply(
        r ? `⏸️ Paused \`${id}\` (${r.description}). /schedule resume ${id} starts it again.` : notFound(id),
      );
    }
    if (verb === "resume") {
      const r = await service.resume(id, threadKey);
      if (!r) return ctx.reply(notFound(id));
      const next = service.nextOf(r, 1)[0];
      return ctx.reply(
        `▶️ Resumed \`${id}\`. ${next !== undefined ? `Next run: ${formatInstant(next, r.spec.tz)}.` : "It has no run left."}`,
      );
    }
    return ctx.reply((await service.remove(id, threadKey)) ? `🗑️ Removed schedule \`${id}\`.` : notFound(id));
  }
  const s = service.settings;
  const parsed = parseSchedule(args, service.now(), {
    defaultTimeZone: s.defaultTimeZone,
    minIntervalMs: s.minIntervalMs,
  });
  if (!parsed.ok) return ctx.reply(`Nothing scheduled: ${parsed.error}`);
  const user = ctx.user;
  const out = await service.create(
    {
      platform: ctx.thread.platform as Platform,
      threadKey,
      channelId: ctx.thread.channelId ?? "",
      isDirect: ctx.thread.isDirect ?? false,
    },
    { id: user?.id ?? "unknown", ...(user?.name ? { name: user.name } : {}) },
    parsed.schedule,
  );
  if (!out.ok) return ctx.reply(`Nothing scheduled: ${out.error}`);
  const { record, next } = out;
  const when = next.map((t) => formatInstant(t, record.spec.tz));
  const label = record.spec.kind === "once" ? "Runs" : `Next run${when.length > 1 ? "s" : ""}`;
  return ctx.reply(
    `⏰ Scheduled \`${record.id}\`: ${record.description}.\n${label}: ${when.join(" · ")}.\nIt runs here as a message from you; /schedule rm ${record.id} removes it.`,
  );
}

function notFound(id: string): string {
  return `No schedule \`${id}\` in this conversation (/schedule list shows them).`;
}
