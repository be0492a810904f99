import type { Row } from '../db/sql.js';
import { SCORE_FIELDS } from './format.js';

/**
 * A trip's stored array as the row models/serving/api_trip_detail.sql returns (the list reads a subset of it).
 * Written out field by field (the order of TRIP_FIELDS, which a test checks): a list builds 20 of
 * these per request, and Object.fromEntries over the field names costs far more a row.
 */
export const tripRow = (values: unknown): Row => {
  const v = values as unknown[];
  return {
    trip_id: v[0],
    device_id: v[1],
    status: v[2],
    abnormal_reason: v[3],
    os: v[4],
    count_events: v[5],
    score: v[6],
    energy_g: v[7],
    avg_speed_kmh: v[8],
    max_speed_kmh: v[9],
    mileage_m: v[10],
    duration_s: v[11],
    coordinate: v[12],
    is_auto_start: v[13],
    is_auto_end: v[14],
    start_time: v[15],
    end_time: v[16],
    started_us: v[17],
    start_lat: v[18],
    start_lng: v[19],
    end_lat: v[20],
    end_lng: v[21],
    start_poi: v[22],
    end_poi: v[23],
  };
};

/** A score's stored array as the row models/serving/api_safety_score.sql returns (the order of SCORE_FIELDS). */
export const scoreRow = (values: unknown): Row => {
  const v = values as unknown[];
  const row: Row = {};
  for (let i = 0; i < SCORE_FIELDS.length; i++) row[SCORE_FIELDS[i] as string] = v[i];
  return row;
};

/** An event's stored array as the row models/serving/api_trip_events.sql returns (the order of EVENT_FIELDS, which a test checks). */
export const eventRow = (v: unknown[]): Row => ({
  type: v[0],
  description: v[1],
  start_lat: v[2],
  start_lng: v[3],
  end_lat: v[4],
  end_lng: v[5],
  start_time: v[6],
  end_time: v[7],
});
