// Calendar dates (YYYY-MM-DD) and time zones, with the platform's own Intl and Date: luxon (which
// the API's time parsing uses) is not loaded by a job for these, and a job that only checks a date
// never loads ICU's locale data (both a noticeable part of a small score run's start).

/** One formatter per zone: building one is the slow part of a zone lookup. */
const formats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formats.set(zone, format);
  }
  return format;
}

/** Whether `zone` is an IANA time zone the platform knows (`Europe/Berlin`, `UTC`). */
export function isValidZone(zone: string): boolean {
  if (!zone) return false;
  try {
    zoneFormat(zone);
    return true;
  } catch {
    return false;
  }
}

/** Today's date (YYYY-MM-DD) in a zone. */
export function todayIn(zone: string, now: Date = new Date()): string {
  // UTC (the jobs' retention day) needs no zone data: the first Intl formatter loads ICU's
  if (zone === 'UTC') return isoDate(now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate());
  const parts = zoneFormat(zone).formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
  return isoDate(part('year'), part('month'), part('day'));
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Validates a calendar date 'YYYY-MM-DD' (rejects a 30th of February). */
export function isDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = utcDay(year, month, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** The dates from `from` to `to`, inclusive. */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) out.push(day);
  return out;
}

export function addDays(date: string, days: number): string {
  const m = DATE.exec(date);
  if (!m) throw new Error(`not a date YYYY-MM-DD: '${date}'`);
  const d = utcDay(Number(m[1]), Number(m[2]), Number(m[3]) + days);
  return isoDate(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
}

/** Midnight UTC of a day; setUTCFullYear, as Date.UTC would take years 0-99 for 1900-1999. A day past the month's end rolls over. */
function utcDay(year: number, month: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d;
}

const isoDate = (year: number, month: number, day: number): string =>
  `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
