// Independent reference implementation of per-period trip statistics (docs/decisions.md, "Statistics and scores").
import type { RefTrip } from './trip.js';
import { addDays, checkDate, firstDayOfMonth, isoWeekday, lastDayOfMonth, localDate } from './time.js';

export interface RefStatistics {
  startTime: string; // 'YYYY-MM-DD 00:00:00' of the (clipped) first day
  endTime: string; // 'YYYY-MM-DD 23:59:59' of the (clipped) last day
  mileageInMeters: number;
  eventCount: number;
  avgSpeedInKmh: number; // unrounded
  maxSpeedInKmh: number; // unrounded
  durationInSeconds: number;
  score: number; // unrounded
  tripCount: number;
}

export type PeriodType = 'day' | 'week' | 'month';

/** The calendar period [first, last] (dates) of the given type containing date. */
export function periodOf(date: string, type: PeriodType): { first: string; last: string } {
  if (type === 'day') return { first: date, last: date };
  if (type === 'week') {
    const monday = addDays(date, 1 - isoWeekday(date));
    return { first: monday, last: addDays(monday, 6) };
  }
  return { first: firstDayOfMonth(date), last: lastDayOfMonth(date) };
}

/** The periods overlapping [startDate, endDate], ascending, clipped to the range. */
export function periodsInRange(
  type: PeriodType,
  startDate: string,
  endDate: string,
): { first: string; last: string }[] {
  checkDate(startDate);
  checkDate(endDate);
  if (endDate < startDate) throw new Error(`endDate ${endDate} is before startDate ${startDate}`);
  const out: { first: string; last: string }[] = [];
  let cursor = startDate;
  while (cursor <= endDate) {
    const p = periodOf(cursor, type);
    const first = p.first < startDate ? startDate : p.first;
    const last = p.last > endDate ? endDate : p.last;
    out.push({ first, last });
    cursor = addDays(p.last, 1);
  }
  return out;
}

export function referenceStatistics(
  trips: (RefTrip & { score: number })[],
  zone: string,
  type: PeriodType,
  startDate: string,
  endDate: string,
): RefStatistics[] {
  const periods = periodsInRange(type, startDate, endDate);
  const result: RefStatistics[] = [];
  for (const period of periods) {
    let mileage = 0;
    let events = 0;
    let duration = 0;
    let maxSpeed = 0;
    let count = 0;
    let weightedScore = 0;
    let plainScore = 0;
    for (const trip of trips) {
      if (trip.status !== 'normal') continue;
      const d = localDate(trip.startMs, zone);
      // periods are clipped to the range, so this also enforces startDate <= d <= endDate
      if (d < period.first || d > period.last) continue;
      count += 1;
      mileage += trip.mileageInMeters;
      events += trip.eventCount;
      duration += trip.durationInSeconds;
      if (trip.maxSpeedInKmh > maxSpeed) maxSpeed = trip.maxSpeedInKmh;
      weightedScore += trip.score * trip.mileageInMeters;
      plainScore += trip.score;
    }
    let score = 0;
    if (count > 0) score = mileage > 0 ? weightedScore / mileage : plainScore / count;
    result.push({
      startTime: `${period.first} 00:00:00`,
      endTime: `${period.last} 23:59:59`,
      mileageInMeters: mileage,
      eventCount: events,
      avgSpeedInKmh: duration === 0 ? 0 : (mileage / duration) * 3.6,
      maxSpeedInKmh: maxSpeed,
      durationInSeconds: duration,
      score,
      tripCount: count,
    });
  }
  return result;
}
