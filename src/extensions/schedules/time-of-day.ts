/**
 * A time of day as written in chat: "09:00", "9:00", "9am", "5:30pm". Kept apart from the date so
 * "at" and "every … at" read times the same way.
 */

/**
 * `word` as a time of day, `bad` when it is shaped like one but out of range ("25:00", "13pm"), or
 * undefined when it is not shaped like a time at all (so it may be something else, or prompt).
 */
export function readTimeOfDay(word: string): { hour: number; minute: number } | "bad" | undefined {
  const clock = /^(\d{1,2}):(\d{2})$/.exec(word);
  if (clock) {
    const hour = Number(clock[1]);
    const minute = Number(clock[2]);
    return hour <= 23 && minute <= 59 ? { hour, minute } : "bad";
  }
  const meridiem = /^(\d{1,2})(?::(\d{2}))?(am|pm)$/i.exec(word);
  if (meridiem) {
    const hour = Number(meridiem[1]);
    const minute = Number(meridiem[2] ?? "0");
    if (hour < 1 || hour > 12 || minute > 59) return "bad";
    return { hour: (hour % 12) + (meridiem[3]?.toLowerCase() === "pm" ? 12 : 0), minute };
  }
  return undefined;
}

/** "09:05": how times of day appear in descriptions, 24-hour like `formatInstant`. */
export function formatTimeOfDay(hour: number, minute: number): string {
  return `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
}
