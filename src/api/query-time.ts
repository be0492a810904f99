import { DateTime } from 'luxon';
import { invalid } from './errors.js';
import { epochDay, isoDate } from '../serving/periods.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LOCAL = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * A query time (decisions 2): `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` in the app's zone, or ISO 8601
 * with an offset. A start is the first instant it names; an end is returned EXCLUSIVE, just past
 * the whole day or second it names, so `endTime=… 10:00:00` keeps a trip that began at 10:00:00.400.
 */
export function parseQueryTime(parameter: string, value: string, zone: string, bound: 'start' | 'end'): Date {
  // the same few dates come with most requests ("the last 30 days"), and luxon's zone arithmetic
  // (Intl formatToParts) was a tenth of a trip list's CPU: answers are remembered, errors are not
  const key = `${bound}\u0000${zone}\u0000${value}`;
  const known = remembered.get(key);
  if (known !== undefined) return new Date(known);
  const at = resolve(parameter, value, zone, bound);
  if (remembered.size >= REMEMBERED) remembered.clear();
  remembered.set(key, at.getTime());
  return at;
}

const REMEMBERED = 10_000;
const remembered = new Map<string, number>();

function resolve(parameter: string, value: string, zone: string, bound: 'start' | 'end'): Date {
  let dt: DateTime;
  if (DATE_ONLY.test(value)) {
    dt = DateTime.fromISO(value, { zone });
    if (bound === 'end') dt = dt.plus({ days: 1 });
  } else if (LOCAL.test(value)) {
    dt = DateTime.fromFormat(value, 'yyyy-MM-dd HH:mm:ss', { zone });
    if (bound === 'end') dt = dt.plus({ seconds: 1 });
  } else if (/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) && value.includes('T')) {
    dt = DateTime.fromISO(value, { setZone: true });
  } else {
    throw invalid(parameter, `'${value}' is not YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS' or ISO 8601 with an offset`);
  }
  if (!dt.isValid) throw invalid(parameter, `'${value}' is not a valid time`);
  // an ISO instant is exact (millisecond precision): its exclusive end is one millisecond later
  if (bound === 'end' && !DATE_ONLY.test(value) && !LOCAL.test(value)) dt = dt.plus({ milliseconds: 1 });
  return dt.toJSDate();
}

/** A calendar date parameter `YYYY-MM-DD` (a real day: the date survives a round trip through days since 1970). */
export function parseQueryDate(parameter: string, value: string): string {
  if (!DATE_ONLY.test(value) || isoDate(epochDay(value)) !== value) {
    throw invalid(parameter, `'${value}' is not a date YYYY-MM-DD`);
  }
  return value;
}
