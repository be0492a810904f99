import { DateTime } from 'luxon';
import { invalid } from './errors.js';
import { epochDay, isoDate } from '../../serving/periods.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LOCAL = /^\d{4}-\d{2}-\d{2} (\d{2}):(\d{2}):(\d{2})$/;
/** ISO 8601 calendar date and time with an offset: `YYYY-MM-DDTHH:MM[:SS[.mmm]]` and `Z`, `±HH:MM` or `±HHMM`. */
const ISO = /^\d{4}-\d{2}-\d{2}T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[zZ]|([+-])(\d{2}):?(\d{2}))$/;
/** Real offsets run from -12:00 to +14:00; ±14:00 either way is the widest accepted. */
const MAX_OFFSET_MINUTES = 14 * 60;

/**
 * A query time (docs/decisions.md, API): `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` in the app's zone, or ISO 8601
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

/**
 * The time of day and offset checked field by field: the parsers accept `24:00:00` (the next
 * day's midnight) and offsets such as `+99:99`, which name no real instant a client meant.
 */
function checkClock(
  parameter: string,
  value: string,
  hour: string | undefined,
  minute: string | undefined,
  second: string | undefined,
): void {
  if (Number(hour) > 23) throw invalid(parameter, `'${value}': hour ${hour} is not 00 to 23`);
  if (Number(minute) > 59) throw invalid(parameter, `'${value}': minute ${minute} is not 00 to 59`);
  if (second !== undefined && Number(second) > 59)
    throw invalid(parameter, `'${value}': second ${second} is not 00 to 59`);
}

function resolve(parameter: string, value: string, zone: string, bound: 'start' | 'end'): Date {
  let dt: DateTime;
  const local = LOCAL.exec(value);
  const iso = ISO.exec(value);
  if (DATE_ONLY.test(value)) {
    dt = DateTime.fromISO(value, { zone });
    if (bound === 'end') dt = dt.plus({ days: 1 });
  } else if (local) {
    checkClock(parameter, value, local[1], local[2], local[3]);
    dt = DateTime.fromFormat(value, 'yyyy-MM-dd HH:mm:ss', { zone });
    if (bound === 'end') dt = dt.plus({ seconds: 1 });
  } else if (iso) {
    checkClock(parameter, value, iso[1], iso[2], iso[3]);
    if (iso[4] !== undefined) {
      const minutes = Number(iso[5]) * 60 + Number(iso[6]);
      if (Number(iso[6]) > 59 || minutes > MAX_OFFSET_MINUTES)
        throw invalid(
          parameter,
          `'${value}': offset ${iso[4]}${iso[5]}:${iso[6]} is not a real offset (at most ±14:00)`,
        );
    }
    dt = DateTime.fromISO(value, { setZone: true });
  } else {
    throw invalid(
      parameter,
      `'${value}' is not YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS' or ISO 8601 (YYYY-MM-DDTHH:MM:SS) with an offset`,
    );
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
