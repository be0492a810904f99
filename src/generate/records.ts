import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile, runFile } from '../db/sql.js';

/** A range of trip_no: one local day's trips, or the bad-source trips. */
export interface TripRange {
  first: number;
  last: number;
}

const NO_TRIPS: TripRange = { first: 0, last: -1 };

/** The trip ranges by local day ('YYYY-MM-DD'); the bad-source trips under `null`. */
export async function tripRanges(conn: DuckDBConnection): Promise<Map<string | null, TripRange>> {
  const ranges = new Map<string | null, TripRange>();
  for (const row of await queryFile(conn, 'generate/day_ranges')) {
    const day = row['trip_day'] === null ? null : String(row['trip_day']);
    ranges.set(day, { first: Number(row['first_trip_no']), last: Number(row['last_trip_no']) });
  }
  return ranges;
}

/**
 * Rebuilds gen_records, the delivered records, for one range of trips (empty without a range).
 *
 * @example await buildRecords(conn, ranges.get('2026-11-20'), { appId, timeZone });
 */
export async function buildRecords(
  conn: DuckDBConnection,
  range: TripRange | undefined,
  context: { appId: string; timeZone: string },
): Promise<void> {
  const { first, last } = range ?? NO_TRIPS;
  await runFile(conn, 'generate/records', {
    first_trip_no: first,
    last_trip_no: last,
    app_id: context.appId,
    time_zone: context.timeZone,
  });
}
