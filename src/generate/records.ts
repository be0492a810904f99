import type { Params } from '../db/sql.js';

/** A range of trip_no: one local day's trips, or the bad-source trips. */
export interface TripRange {
  first: number;
  last: number;
}

const NO_TRIPS: TripRange = { first: 0, last: -1 };

/**
 * The parameters of the statements that read the gen_records table macro (sql/generate/records.sql)
 * for one range of trips; without a range, none (the empty file of a day without trips).
 *
 * @example await run(conn, sqlText('generate/day_ndjson'), recordParams(ranges.get('2026-11-20'), { appId, timeZone }));
 */
export function recordParams(range: TripRange | undefined, context: { appId: string; timeZone: string }): Params {
  const { first, last } = range ?? NO_TRIPS;
  return { first_trip_no: first, last_trip_no: last, app_id: context.appId, time_zone: context.timeZone };
}
