// Independent reference implementation of one trip record's validation and derived fields
// (docs/decisions.md "Trip records", plus the per-trip factor seconds of "Statistics and scores").
// Plain loops, no cleverness: this is the oracle that the SQL pipeline is checked against.
import {
  addDays,
  isoWeekday,
  localDate,
  localInstantMs,
  localMidnightMs,
  overlapSeconds,
  parseTimeMs,
  parseNestedTimeMs,
  lenientNumber,
  roundHalfAwayFromZero,
} from './time.js';

export interface RefTrip {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  tripId: string;
  startMs: number; // instants, epoch ms
  endMs: number;
  status: 'normal' | 'abnormal';
  abnormalReason: string; // '' when normal
  durationInSeconds: number; // round((end-start)/1000), half away from zero
  mileageInMeters: number; // round(sum haversine over consecutive valid points, R = 6371008.8)
  maxSpeedInKmh: number; // unrounded
  avgSpeedInKmh: number; // unrounded
  eventCount: number; // valid events
  validPoints: number;
  droppedPoints: Record<string, number>; // by reason code; only codes that occurred
  quarantinedEvents: Record<string, number>; // by reason code; only codes that occurred
  drivingSeconds: number;
  lowSpeedSeconds: number;
  accOver1Seconds: number;
  distractedSeconds: number;
  eveningRushSeconds: number;
  weekdaySeconds: number;
  localStartDate: string;
}

export type RecordRejection =
  | 'missing_app_id'
  | 'invalid_platform_user_id'
  | 'missing_org_user_id'
  | 'missing_trip_id'
  | 'invalid_os'
  | 'invalid_coordinate'
  | 'invalid_start_time'
  | 'invalid_end_time'
  | 'time_out_of_range';

export type PointDropReason =
  | 'non_finite'
  | 'invalid_position'
  | 'negative_speed'
  | 'time_out_of_range'
  | 'duplicate_time'
  | 'position_spike';

export type EventQuarantineReason = 'invalid_event' | 'unknown_event_type' | 'event_time_inverted';

export type AbnormalReason =
  | 'time_inverted'
  | 'too_few_points'
  | 'speed_implausible'
  | 'speed_inconsistent'
  | 'too_short'
  | 'overlapping_trip';

export const EARTH_RADIUS_M = 6371008.8;
export const POINT_TIME_TOLERANCE_MS = 60_000;
export const MAX_DRIVING_DT_S = 10;
export const LOW_SPEED_MAX_KMH = 20;
export const ACC_THRESHOLD_MS2 = 1;
export const IMPLAUSIBLE_SPEED_KMH = 250;
export const EARLIEST_RECORD_MS = Date.UTC(2000, 0, 1, 0, 0, 0);
export const FUTURE_TOLERANCE_MS = 10 * 60 * 1000;
export const MIN_DURATION_S = 60;
/** speed_inconsistent: judged once positions and reported speeds together cover this many metres. */
export const CONSISTENCY_MIN_METERS = 2000;
export const CONSISTENCY_MIN_RATIO = 0.5;
export const CONSISTENCY_MAX_RATIO = 2;
export const MIN_MILEAGE_M = 100;
export const EVENING_RUSH_FROM_HOUR = 17;
export const EVENING_RUSH_TO_HOUR = 20;

export const EVENT_TYPES: readonly string[] = [
  'brake',
  'throttle',
  'corner_left',
  'corner_right',
  'speeding',
  'phone_call',
  'phone_usage',
  'night_driving',
  'tired_driving',
];
export const DISTRACTION_EVENT_TYPES: readonly string[] = ['phone_call', 'phone_usage'];

export interface ValidPoint {
  t: number; // epoch ms
  lat: number;
  lng: number;
  speed: number; // m/s
}

export interface ValidEvent {
  type: string;
  startMs: number;
  endMs: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function increment(counts: Record<string, number>, code: string): void {
  counts[code] = (counts[code] ?? 0) + 1;
}

/** Great-circle distance in metres (haversine, R = 6,371,008.8 m). */
export function haversineMeters(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const toRad = Math.PI / 180;
  const phi1 = lat1 * toRad;
  const phi2 = lat2 * toRad;
  const dPhi = (lat2 - lat1) * toRad;
  const dLambda = (lng2 - lng1) * toRad;
  const a = Math.sin(dPhi / 2) ** 2 + Math.cos(phi1) * Math.cos(phi2) * Math.sin(dLambda / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Record-level validation against the moment it is validated (epoch ms); the first failing rule wins. */
export function validateRecord(record: Record<string, unknown>, validatedAtMs: number): RecordRejection | null {
  if (!isNonEmptyString(record.appId)) return 'missing_app_id';
  const uid = record.platformUserId;
  if (typeof uid !== 'number' || !Number.isInteger(uid) || uid <= 0 || uid >= 2 ** 53) {
    return 'invalid_platform_user_id';
  }
  if (!isNonEmptyString(record.orgUserId)) return 'missing_org_user_id';
  if (!isNonEmptyString(record.tripId)) return 'missing_trip_id';
  if (record.os !== 'android' && record.os !== 'ios') return 'invalid_os';
  const coord = record.coordinate;
  if (coord !== undefined && coord !== null && coord !== 'WGS84' && coord !== 'GCJ02') return 'invalid_coordinate';
  if (parseTimeMs(record.startTime) === null) return 'invalid_start_time';
  if (parseTimeMs(record.endTime) === null) return 'invalid_end_time';
  const latestAllowed = validatedAtMs + FUTURE_TOLERANCE_MS;
  for (const ms of [parseTimeMs(record.startTime) as number, parseTimeMs(record.endTime) as number]) {
    if (ms < EARLIEST_RECORD_MS) return 'time_out_of_range';
    if (ms > latestAllowed) return 'time_out_of_range';
  }
  return null;
}

/** km/h between two points; null when no time passes between them. */
function segmentKmh(a: ValidPoint, b: ValidPoint): number | null {
  const seconds = (b.t - a.t) / 1000;
  if (seconds <= 0) return null;
  return (haversineMeters(a.lat, a.lng, b.lat, b.lng) / seconds) * 3.6;
}

function tooFast(kmh: number | null): boolean {
  return kmh !== null && kmh > IMPLAUSIBLE_SPEED_KMH;
}

/**
 * Position spikes: with the segment speeds of the points as given (time order), an inner point
 * both of whose segments are too fast goes. Every point is judged on the original sequence, so
 * removing one spike never turns its neighbour into one or saves it.
 */
export function removeSpikes(points: ValidPoint[]): { points: ValidPoint[]; spikes: number } {
  const speeds: (number | null)[] = [];
  for (let k = 0; k + 1 < points.length; k++)
    speeds.push(segmentKmh(points[k] as ValidPoint, points[k + 1] as ValidPoint));
  const left: ValidPoint[] = [];
  let spikes = 0;
  points.forEach((p, i) => {
    const inner = i > 0 && i < points.length - 1;
    if (inner && tooFast(speeds[i - 1] ?? null) && tooFast(speeds[i] ?? null)) spikes++;
    else left.push(p);
  });
  return { points: left, spikes };
}

/**
 * Point filtering: the first matching drop code per point, then duplicate_time among the remaining points
 * (array order: the first is kept). Returns the valid points sorted by t, and drop counts.
 */
export function filterPoints(
  rawPoints: unknown,
  startMs: number,
  endMs: number,
): { points: ValidPoint[]; dropped: Record<string, number> } {
  const dropped: Record<string, number> = {};
  const list: unknown[] = Array.isArray(rawPoints) ? rawPoints : [];
  const kept: ValidPoint[] = [];
  const seenTimes = new Set<number>();
  const lo = startMs - POINT_TIME_TOLERANCE_MS;
  const hi = endMs + POINT_TIME_TOLERANCE_MS;
  for (const raw of list) {
    if (!isObject(raw)) {
      increment(dropped, 'non_finite');
      continue;
    }
    const t = parseNestedTimeMs(raw.t);
    const lat = lenientNumber(raw.lat);
    const lng = lenientNumber(raw.lng);
    const speed = lenientNumber(raw.speed);
    if (t === null || lat === null || lng === null || speed === null) {
      increment(dropped, 'non_finite');
      continue;
    }
    if (Math.abs(lat) > 90 || Math.abs(lng) > 180) {
      increment(dropped, 'invalid_position');
      continue;
    }
    if (speed < 0) {
      increment(dropped, 'negative_speed');
      continue;
    }
    if (t < lo || t > hi) {
      increment(dropped, 'time_out_of_range');
      continue;
    }
    if (seenTimes.has(t)) {
      increment(dropped, 'duplicate_time');
      continue;
    }
    seenTimes.add(t);
    kept.push({ t, lat, lng, speed });
  }
  kept.sort((a, b) => a.t - b.t);
  return { points: kept, dropped };
}

/** Event filtering: invalid_event, unknown_event_type, event_time_inverted, checked in that order. */
export function filterEvents(rawEvents: unknown): { events: ValidEvent[]; quarantined: Record<string, number> } {
  const quarantined: Record<string, number> = {};
  const list: unknown[] = Array.isArray(rawEvents) ? rawEvents : [];
  const events: ValidEvent[] = [];
  const isPoint = (p: unknown): boolean =>
    isObject(p) && lenientNumber(p.lat) !== null && lenientNumber(p.lng) !== null;
  for (const raw of list) {
    if (!isObject(raw)) {
      increment(quarantined, 'invalid_event');
      continue;
    }
    const s = parseNestedTimeMs(raw.startTime);
    const e = parseNestedTimeMs(raw.endTime);
    if (s === null || e === null || !isPoint(raw.startPoint) || !isPoint(raw.endPoint)) {
      increment(quarantined, 'invalid_event');
      continue;
    }
    if (typeof raw.type !== 'string' || !EVENT_TYPES.includes(raw.type)) {
      increment(quarantined, 'unknown_event_type');
      continue;
    }
    if (e < s) {
      increment(quarantined, 'event_time_inverted');
      continue;
    }
    events.push({ type: raw.type, startMs: s, endMs: e });
  }
  return { events, quarantined };
}

/** Length in seconds of the union of the distraction events' intervals, each clipped to [startMs, endMs]. */
export function distractedSecondsOf(events: ValidEvent[], startMs: number, endMs: number): number {
  const clipped: [number, number][] = [];
  for (const ev of events) {
    if (!DISTRACTION_EVENT_TYPES.includes(ev.type)) continue;
    const s = Math.max(ev.startMs, startMs);
    const e = Math.min(ev.endMs, endMs);
    if (e > s) clipped.push([s, e]);
  }
  clipped.sort((a, b) => a[0] - b[0]);
  let totalMs = 0;
  let curS: number | null = null;
  let curE = 0;
  for (const [s, e] of clipped) {
    if (curS === null) {
      curS = s;
      curE = e;
    } else if (s <= curE) {
      if (e > curE) curE = e;
    } else {
      totalMs += curE - curS;
      curS = s;
      curE = e;
    }
  }
  if (curS !== null) totalMs += curE - curS;
  return totalMs / 1000;
}

/** Local calendar days touched by [startMs, endMs): from the start's local date to the end's local date. */
function touchedLocalDays(startMs: number, endMs: number, zone: string): string[] {
  const days: string[] = [];
  if (endMs <= startMs) return days;
  const last = localDate(endMs, zone);
  for (let d = localDate(startMs, zone); d <= last; d = addDays(d, 1)) days.push(d);
  return days;
}

/** Seconds of [startMs, endMs) within local 17:00-20:00 on every local day the interval touches. */
export function eveningRushSecondsOf(startMs: number, endMs: number, zone: string): number {
  let total = 0;
  for (const d of touchedLocalDays(startMs, endMs, zone)) {
    const from = localInstantMs(d, EVENING_RUSH_FROM_HOUR, zone);
    const to = localInstantMs(d, EVENING_RUSH_TO_HOUR, zone);
    total += overlapSeconds(startMs, endMs, from, to);
  }
  return total;
}

/** Seconds of [startMs, endMs) on local Monday..Friday (day bounds are real local midnights). */
export function weekdaySecondsOf(startMs: number, endMs: number, zone: string): number {
  let total = 0;
  for (const d of touchedLocalDays(startMs, endMs, zone)) {
    if (isoWeekday(d) > 5) continue; // 6 = Saturday, 7 = Sunday
    const from = localMidnightMs(d, zone);
    const to = localMidnightMs(addDays(d, 1), zone);
    total += overlapSeconds(startMs, endMs, from, to);
  }
  return total;
}

/** Rule speed_inconsistent: enough distance to judge, and D_pos / D_rep outside [0.5, 2] (D_rep 0 is outside). */
export function speedsInconsistent(positionMeters: number, reportedMeters: number): boolean {
  if (positionMeters + reportedMeters < CONSISTENCY_MIN_METERS) return false;
  if (reportedMeters === 0) return true;
  const ratio = positionMeters / reportedMeters;
  return ratio < CONSISTENCY_MIN_RATIO || ratio > CONSISTENCY_MAX_RATIO;
}

export function referenceTrip(
  record: Record<string, unknown>,
  appZone: string,
  validatedAtMs: number,
): RefTrip | { rejected: string } {
  const rejection = validateRecord(record, validatedAtMs);
  if (rejection !== null) return { rejected: rejection };
  // validateRecord guarantees these.
  const startMs = parseTimeMs(record.startTime) as number;
  const endMs = parseTimeMs(record.endTime) as number;

  const filtered = filterPoints(record.points, startMs, endMs);
  const dropped = filtered.dropped;
  const { points, spikes } = removeSpikes(filtered.points);
  if (spikes > 0) dropped['position_spike'] = spikes;
  const { events, quarantined } = filterEvents(record.events);

  const durationInSeconds = roundHalfAwayFromZero((endMs - startMs) / 1000);

  let mileageRaw = 0;
  let maxSpeed = 0;
  let drivingSeconds = 0;
  let lowSpeedSeconds = 0;
  let accOver1Seconds = 0;
  let positionMeters = 0; // D_pos: haversine over driving intervals
  let reportedMeters = 0; // D_rep: earlier point's speed x dt over driving intervals
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as ValidPoint;
    if (p.speed > maxSpeed) maxSpeed = p.speed;
    if (i + 1 >= points.length) continue;
    const q = points[i + 1] as ValidPoint;
    mileageRaw += haversineMeters(p.lat, p.lng, q.lat, q.lng);
    const dt = (q.t - p.t) / 1000;
    if (dt > 0 && dt <= MAX_DRIVING_DT_S) {
      drivingSeconds += dt;
      positionMeters += haversineMeters(p.lat, p.lng, q.lat, q.lng);
      reportedMeters += p.speed * dt;
      if (p.speed * 3.6 <= LOW_SPEED_MAX_KMH) lowSpeedSeconds += dt;
      if (Math.abs(q.speed - p.speed) / dt > ACC_THRESHOLD_MS2) accOver1Seconds += dt;
    }
  }
  const mileageInMeters = roundHalfAwayFromZero(mileageRaw);
  const maxSpeedInKmh = maxSpeed * 3.6;
  const avgSpeedInKmh = durationInSeconds === 0 ? 0 : (mileageInMeters / durationInSeconds) * 3.6;

  let abnormalReason: AbnormalReason | '' = '';
  if (endMs <= startMs) abnormalReason = 'time_inverted';
  else if (points.length < 2) abnormalReason = 'too_few_points';
  else if (
    points.some((p) => p.speed * 3.6 > IMPLAUSIBLE_SPEED_KMH) ||
    points.some((p, i) => i > 0 && tooFast(segmentKmh(points[i - 1] as ValidPoint, p)))
  ) {
    abnormalReason = 'speed_implausible';
  } else if (speedsInconsistent(positionMeters, reportedMeters)) abnormalReason = 'speed_inconsistent';
  else if (durationInSeconds < MIN_DURATION_S || mileageInMeters < MIN_MILEAGE_M) abnormalReason = 'too_short';

  return {
    appId: record.appId as string,
    platformUserId: record.platformUserId as number,
    orgUserId: record.orgUserId as string,
    tripId: record.tripId as string,
    startMs,
    endMs,
    status: abnormalReason === '' ? 'normal' : 'abnormal',
    abnormalReason,
    durationInSeconds,
    mileageInMeters,
    maxSpeedInKmh,
    avgSpeedInKmh,
    eventCount: events.length,
    validPoints: points.length,
    droppedPoints: dropped,
    quarantinedEvents: quarantined,
    drivingSeconds,
    lowSpeedSeconds,
    accOver1Seconds,
    distractedSeconds: distractedSecondsOf(events, startMs, endMs),
    eveningRushSeconds: eveningRushSecondsOf(startMs, endMs, appZone),
    weekdaySeconds: weekdaySecondsOf(startMs, endMs, appZone),
    localStartDate: localDate(startMs, appZone),
  };
}
