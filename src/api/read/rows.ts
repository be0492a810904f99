import type { Row } from '../../db/sql.js';

// The rows the API's reads give, typed: one interface per model file, its columns by their SQL
// names, converted once here from what DuckDB's JSON rows or the serving pack's payloads hold (a
// BIGINT comes as a string from the one, a number from the other), so the routes read typed fields.

const text = (v: unknown): string => String(v);
const maybeText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: unknown): number => Number(v);
const maybeNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The fields a trip's brief (the trip list, the detail, the export) is made of. */
export interface TripFieldsRow {
  trip_id: string;
  device_id: string;
  status: string;
  score: number;
  energy_g: number;
  mileage_m: number;
  duration_s: number;
  /** Local time in the app's zone, `YYYY-MM-DD HH:MM:SS`. */
  start_time: string;
  end_time: string;
  start_lat: number | null;
  start_lng: number | null;
  end_lat: number | null;
  end_lng: number | null;
  start_poi: string | null;
  end_poi: string | null;
  /** The trip list's count; the detail lists the events instead. */
  count_events?: number;
}

function tripFields(r: Row): TripFieldsRow {
  return {
    trip_id: text(r['trip_id']),
    device_id: text(r['device_id']),
    status: text(r['status']),
    score: num(r['score']),
    energy_g: num(r['energy_g']),
    mileage_m: num(r['mileage_m']),
    duration_s: num(r['duration_s']),
    start_time: text(r['start_time']),
    end_time: text(r['end_time']),
    start_lat: maybeNum(r['start_lat']),
    start_lng: maybeNum(r['start_lng']),
    end_lat: maybeNum(r['end_lat']),
    end_lng: maybeNum(r['end_lng']),
    start_poi: maybeText(r['start_poi']),
    end_poi: maybeText(r['end_poi']),
  };
}

/** A row of models/serving/api_trip_list.sql. */
export interface TripListRow extends TripFieldsRow {
  count_events: number;
  /** The start in µs since the epoch, as a decimal string (the keyset's cursor). */
  started_us: string;
}

export const tripListRow = (r: Row): TripListRow => ({
  ...tripFields(r),
  count_events: num(r['count_events']),
  started_us: text(r['started_us']),
});

/** A row of models/serving/api_trip_detail.sql. */
export interface TripDetailRow extends TripFieldsRow {
  abnormal_reason: string;
  os: string;
  avg_speed_kmh: number;
  max_speed_kmh: number;
  coordinate: string;
  is_auto_start: boolean;
  is_auto_end: boolean;
}

export const tripDetailRow = (r: Row): TripDetailRow => ({
  ...tripFields(r),
  abnormal_reason: text(r['abnormal_reason']),
  os: text(r['os']),
  avg_speed_kmh: num(r['avg_speed_kmh']),
  max_speed_kmh: num(r['max_speed_kmh']),
  coordinate: text(r['coordinate']),
  is_auto_start: Boolean(r['is_auto_start']),
  is_auto_end: Boolean(r['is_auto_end']),
});

/** A row of models/serving/api_trip_events.sql. */
export interface TripEventRow {
  type: string;
  description: string;
  start_lat: number;
  start_lng: number;
  end_lat: number;
  end_lng: number;
  start_time: string;
  end_time: string;
}

export const tripEventRow = (r: Row): TripEventRow => ({
  type: text(r['type']),
  description: text(r['description']),
  start_lat: num(r['start_lat']),
  start_lng: num(r['start_lng']),
  end_lat: num(r['end_lat']),
  end_lng: num(r['end_lng']),
  start_time: text(r['start_time']),
  end_time: text(r['end_time']),
});

/** A row of models/marts/statistics_periods.sql: one period, clipped to the range. */
export interface StatisticsRow {
  /** `YYYY-MM-DD`. */
  period_start: string;
  period_end: string;
  mileage_m: number;
  count_events: number;
  avg_speed_kmh: number;
  max_speed_kmh: number;
  duration_s: number;
  score: number;
}

export const statisticsRow = (r: Row): StatisticsRow => ({
  period_start: text(r['period_start']),
  period_end: text(r['period_end']),
  mileage_m: num(r['mileage_m']),
  count_events: num(r['count_events']),
  avg_speed_kmh: num(r['avg_speed_kmh']),
  max_speed_kmh: num(r['max_speed_kmh']),
  duration_s: num(r['duration_s']),
  score: num(r['score']),
});

/** The score model's inputs, as their columns are named (`events`: the dangerous events per 100 km). */
export const SCORE_INPUTS = [
  'distracted_driving',
  'evening_rush_hour',
  'acclong_abs_1',
  'weekday_driving',
  'low_speed',
  'events',
] as const;
type ScoreInput = (typeof SCORE_INPUTS)[number];

/**
 * A row of models/serving/api_safety_score.sql, and of api_safety_score_history.sql (the same
 * columns, the pack's scores payload too).
 */
export type ScoreRow = {
  evaluation_date: string;
  evaluation_time: string;
  start_time: string;
  end_time: string;
  safety_score: number;
  count_trips: number;
  distracted_driving: number;
  evening_rush_hour: number;
  acclong_abs_1: number;
  weekday_driving: number;
  low_speed: number;
  events_per_100km: number;
  percentile: number | null;
  model_version: string;
} & { [K in ScoreInput as `multiplier_${K}` | `contribution_${K}`]: number | null };

export function scoreRow(r: Row): ScoreRow {
  const explained = Object.fromEntries(
    SCORE_INPUTS.flatMap((input) => [
      [`multiplier_${input}`, maybeNum(r[`multiplier_${input}`])],
      [`contribution_${input}`, maybeNum(r[`contribution_${input}`])],
    ]),
  ) as { [K in ScoreInput as `multiplier_${K}` | `contribution_${K}`]: number | null };
  return {
    evaluation_date: text(r['evaluation_date']),
    evaluation_time: text(r['evaluation_time']),
    start_time: text(r['start_time']),
    end_time: text(r['end_time']),
    safety_score: num(r['safety_score']),
    count_trips: num(r['count_trips']),
    distracted_driving: num(r['distracted_driving']),
    evening_rush_hour: num(r['evening_rush_hour']),
    acclong_abs_1: num(r['acclong_abs_1']),
    weekday_driving: num(r['weekday_driving']),
    low_speed: num(r['low_speed']),
    events_per_100km: num(r['events_per_100km']),
    percentile: maybeNum(r['percentile']),
    model_version: text(r['model_version']),
    ...explained,
  };
}
