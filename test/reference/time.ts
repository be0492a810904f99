// Independent reference implementation: time helpers shared by trip.ts, statistics.ts and factors.ts.
// Written from docs (decisions.md sections 2-4, 6, 7) only. Plain and explicit on purpose.
import { DateTime } from 'luxon';

/**
 * ISO 8601 date-time WITH an offset: YYYY-MM-DDTHH:MM[:SS[.fraction]] followed by 'Z', '±HH', '±HHMM'
 * or '±HH:MM'. The 'T' separator is required (a space is not accepted), and so is the offset.
 * Guarding with this pattern matters: luxon's fromISO alone also accepts date-only and time-only strings
 * (a time-only string would be read as "today").
 */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$/;

/**
 * A record time: an epoch-millisecond number (any finite number) or an ISO 8601 string with an offset.
 * Returns epoch ms, or null when the value is missing, not finite, a string without offset, or unparseable.
 */
export function parseTimeMs(value: unknown): number | null {
  if (typeof value === 'number') {
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string') {
    if (!ISO_WITH_OFFSET.test(value)) return null;
    const dt = DateTime.fromISO(value, { setZone: true });
    if (!dt.isValid) return null;
    return dt.toMillis();
  }
  return null;
}

const NUMERIC = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Product decision (docs/decisions.md, "Lenient nested values"): inside points and events a number
 * may arrive as a numeric string ("5", "1781510400000"); record-level fields stay strict.
 */
export function lenientNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && NUMERIC.test(value.trim())) return Number(value.trim());
  return null;
}

/** A point or event time: epoch ms as a number or numeric string, or ISO 8601 with an offset. */
export function parseNestedTimeMs(value: unknown): number | null {
  const n = typeof value === 'string' ? lenientNumber(value) : null;
  return n !== null ? n : parseTimeMs(value);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Validates a calendar date 'YYYY-MM-DD' (throws otherwise) and returns it. */
export function checkDate(date: string): string {
  if (!DATE_ONLY.test(date) || !DateTime.fromISO(date, { zone: 'utc' }).isValid) {
    throw new Error(`invalid date: ${date}`);
  }
  return date;
}

/** Calendar arithmetic on 'YYYY-MM-DD' strings (no zone involved). */
export function addDays(date: string, days: number): string {
  const d = DateTime.fromISO(checkDate(date), { zone: 'utc' }).plus({ days });
  return d.toFormat('yyyy-MM-dd');
}

/** ISO weekday of a calendar date: 1 = Monday ... 7 = Sunday. */
export function isoWeekday(date: string): number {
  return DateTime.fromISO(checkDate(date), { zone: 'utc' }).weekday;
}

/** Last calendar day of the month containing date. */
export function lastDayOfMonth(date: string): string {
  return DateTime.fromISO(checkDate(date), { zone: 'utc' }).endOf('month').toFormat('yyyy-MM-dd');
}

/** First calendar day of the month containing date. */
export function firstDayOfMonth(date: string): string {
  return DateTime.fromISO(checkDate(date), { zone: 'utc' }).startOf('month').toFormat('yyyy-MM-dd');
}

/** The instant (epoch ms) of local wall-clock time date + hour:00:00 in zone (luxon shifts a non-existent time forward). */
export function localInstantMs(date: string, hour: number, zone: string): number {
  checkDate(date);
  const [y, m, d] = date.split('-').map((s) => Number(s)) as [number, number, number];
  const dt = DateTime.fromObject({ year: y, month: m, day: d, hour, minute: 0, second: 0, millisecond: 0 }, { zone });
  if (!dt.isValid) throw new Error(`invalid zone or date: ${zone} ${date}`);
  return dt.toMillis();
}

/** Local midnight (start of the local day) of date in zone, as epoch ms. */
export function localMidnightMs(date: string, zone: string): number {
  return localInstantMs(date, 0, zone);
}

/** The local calendar date 'YYYY-MM-DD' of an instant in zone. */
export function localDate(ms: number, zone: string): string {
  const dt = DateTime.fromMillis(ms, { zone });
  if (!dt.isValid) throw new Error(`invalid zone: ${zone}`);
  return dt.toFormat('yyyy-MM-dd');
}

/** Length in seconds of the intersection of [aStart, aEnd) and [bStart, bEnd) (epoch ms), 0 when empty. */
export function overlapSeconds(aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const s = Math.max(aStart, bStart);
  const e = Math.min(aEnd, bEnd);
  return e > s ? (e - s) / 1000 : 0;
}

/**
 * Round half away from zero (SQL ROUND semantics). Math.round rounds -1.5 to -1; this returns -2.
 * For non-negative inputs it is identical to Math.round.
 */
export function roundHalfAwayFromZero(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}
