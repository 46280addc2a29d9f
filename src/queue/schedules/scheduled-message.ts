/**
 * A scheduled prompt as the message its thread receives: from its owner, marked as scheduled in
 * its text (so the session, and pi reading it, shows what it was), with an event id made of the
 * schedule and the occurrence, which is what makes a second delivery of the same occurrence a
 * duplicate the runtime ignores.
 */
import type { InboundMessage } from "../../adapters/types.js";
import { formatInstant } from "../../extensions/schedules/time-zone.js";
import type { ScheduleRecord } from "./types.js";

const EVENT_PREFIX = "schedule:";

/** The event id of occurrence `occurrence` of schedule `id`. */
function scheduledEventId(id: string, occurrence: number): string {
  return `${EVENT_PREFIX}${id}:${occurrence}`;
}

/** The schedule and occurrence an event id names, or undefined for any other event. */
export function parseScheduledEventId(eventId: string): { id: string; occurrence: number } | undefined {
  if (!eventId.startsWith(EVENT_PREFIX)) return undefined;
  const rest = eventId.slice(EVENT_PREFIX.length);
  const colon = rest.lastIndexOf(":");
  const occurrence = Number(rest.slice(colon + 1));
  if (colon <= 0 || !Number.isSafeInteger(occurrence)) return undefined;
  return { id: rest.slice(0, colon), occurrence };
}

/**
 * The text the model reads: one line saying this is scheduled (which schedule, when it was due,
 * and the quiet marker to answer when there is nothing to post), then the prompt as written.
 */
function scheduledText(record: ScheduleRecord, occurrence: number, quietMarker: string): string {
  const due = formatInstant(occurrence, record.spec.tz);
  const quiet = quietMarker ? ` If there is nothing worth posting, answer exactly ${quietMarker}.` : "";
  return `[Scheduled prompt ${record.id} (${record.description}), due ${due}.${quiet}]\n${record.prompt}`;
}

/** The message occurrence `occurrence` of `record` delivers into its thread. */
export function scheduledMessage(
  record: ScheduleRecord,
  occurrence: number,
  quietMarker: string,
  now: number,
): InboundMessage {
  const { target, owner } = record;
  return {
    platform: target.platform,
    threadKey: target.threadKey,
    eventId: scheduledEventId(record.id, occurrence),
    messageId: "",
    channelId: target.channelId,
    user: { id: owner.id, ...(owner.name ? { name: owner.name } : {}), isBot: false },
    text: scheduledText(record, occurrence, quietMarker),
    attachments: [],
    mentioned: true,
    isDirect: target.isDirect,
    timestamp: now,
  };
}
