import { DateTime, IANAZone } from 'luxon';

export function isValidZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/** Today's date (YYYY-MM-DD) in a zone. */
export function todayIn(zone: string, now: Date = new Date()): string {
  return DateTime.fromJSDate(now, { zone }).toISODate() as string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Validates a calendar date 'YYYY-MM-DD' (rejects 2026-02-30). */
export function isDate(value: string): boolean {
  return DATE.test(value) && DateTime.fromISO(value, { zone: 'UTC' }).isValid;
}

/** The dates from `from` to `to`, inclusive. */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  let day = DateTime.fromISO(from, { zone: 'UTC' });
  const last = DateTime.fromISO(to, { zone: 'UTC' });
  while (day <= last) {
    out.push(day.toISODate() as string);
    day = day.plus({ days: 1 });
  }
  return out;
}

export function addDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate() as string;
}
