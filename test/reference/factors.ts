// Independent reference implementation of the safety-score factors (docs/decisions.md, "Statistics and scores").
import type { RefTrip } from './trip.js';
import { addDays, checkDate, localMidnightMs } from './time.js';

export interface RefFactors {
  windowStart: string; // 'YYYY-MM-DD 00:00:00' of D - interval
  windowEnd: string; // 'YYYY-MM-DD 23:59:59' of D - 1
  tripCount: number;
  totalSeconds: number; // T = sum of durationInSeconds of the window's normal trips
  distractedDriving: number;
  eveningRushHour: number;
  weekdayDriving: number;
  lowSpeed: number;
  acclongAbs1: number;
  mileageInMeters: number;
  eventCount: number;
}

function share(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}

/** The window [fromMs, toMs) of real instants: local (D - interval) 00:00:00 up to local D 00:00:00. */
export function factorWindow(
  zone: string,
  evaluationDate: string,
  intervalDays: number,
): { fromMs: number; toMs: number; firstDate: string; lastDate: string } {
  checkDate(evaluationDate);
  const firstDate = addDays(evaluationDate, -intervalDays);
  const lastDate = addDays(evaluationDate, -1);
  return {
    fromMs: localMidnightMs(firstDate, zone),
    toMs: localMidnightMs(evaluationDate, zone),
    firstDate,
    lastDate,
  };
}

export function referenceFactors(
  trips: RefTrip[],
  zone: string,
  evaluationDate: string,
  intervalDays: 30 | 90,
): RefFactors {
  const w = factorWindow(zone, evaluationDate, intervalDays);
  let tripCount = 0;
  let totalSeconds = 0;
  let distracted = 0;
  let rush = 0;
  let weekday = 0;
  let driving = 0;
  let low = 0;
  let acc = 0;
  let mileage = 0;
  let events = 0;
  for (const trip of trips) {
    if (trip.status !== 'normal') continue;
    if (trip.startMs < w.fromMs || trip.startMs >= w.toMs) continue;
    tripCount += 1;
    totalSeconds += trip.durationInSeconds;
    distracted += trip.distractedSeconds;
    rush += trip.eveningRushSeconds;
    weekday += trip.weekdaySeconds;
    driving += trip.drivingSeconds;
    low += trip.lowSpeedSeconds;
    acc += trip.accOver1Seconds;
    mileage += trip.mileageInMeters;
    events += trip.eventCount;
  }
  return {
    windowStart: `${w.firstDate} 00:00:00`,
    windowEnd: `${w.lastDate} 23:59:59`,
    tripCount,
    totalSeconds,
    distractedDriving: share(distracted, totalSeconds),
    eveningRushHour: share(rush, totalSeconds),
    weekdayDriving: share(weekday, totalSeconds),
    lowSpeed: share(low, driving),
    acclongAbs1: share(acc, driving),
    mileageInMeters: mileage,
    eventCount: events,
  };
}
