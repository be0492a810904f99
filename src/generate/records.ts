import type { DuckDBConnection } from '@duckdb/node-api';
import { runFile } from '../db/sql.js';

/** A range of trip_no: one local day's trips, or the bad-source trips. */
export interface TripRange {
  first: number;
  last: number;
}

const NO_TRIPS: TripRange = { first: 0, last: -1 };

/**
 * Rebuilds gen_records, the delivered records, for one range of trips (empty without a range).
 *
 * @example await buildRecords(conn, ranges.get(day), { appId, timeZone });
 */
export async function buildRecords(
  conn: DuckDBConnection,
  range: TripRange | undefined,
  context: { appId: string; timeZone: string },
): Promise<void> {
  const { first, last } = range ?? NO_TRIPS;
  await runFile(conn, 'tools/generate/records', {
    first_trip_no: first,
    last_trip_no: last,
    app_id: context.appId,
    time_zone: context.timeZone,
  });
}
