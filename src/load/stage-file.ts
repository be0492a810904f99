import type { DuckDBConnection } from '@duckdb/node-api';
import { materialize, quoteIdent } from '../db/sql.js';

/** The models that turn one input file into loadable rows, in dependency order. */
const DERIVE = [
  'intermediate/int_trip_records',
  'intermediate/int_loadable_records',
  'intermediate/int_points',
  'intermediate/int_point_intervals',
  'intermediate/int_trip_point_metrics',
  'intermediate/int_events',
  'intermediate/int_trip_distraction',
  'intermediate/int_trip_time_factors',
] as const;

export type InputFormat = 'ndjson' | 'parquet';

export function formatOf(path: string): InputFormat {
  return /\.parquet$/i.test(path) ? 'parquet' : 'ndjson';
}

/**
 * Reads one file into the staging and intermediate temp tables of the connection.
 * `int_trips` (which needs the batch's identity) is materialised by the caller.
 * `validatedAt` is the moment record times are judged against (no record time may lie more than
 * 10 minutes after it): the load's clock.
 */
export async function stageFile(conn: DuckDBConnection, path: string, validatedAt: Date): Promise<void> {
  if (formatOf(path) === 'parquet') {
    await materialize(conn, 'staging/stg_trip_records_parquet', { path }, 'stg_trip_records');
    await materialize(conn, 'staging/stg_no_lines', {}, 'raw_lines');
  } else {
    await materialize(conn, 'staging/stg_raw_lines', { path }, 'raw_lines');
    await materialize(conn, 'staging/stg_trip_records');
  }
  for (const model of DERIVE) await materialize(conn, model, { validated_at: validatedAt.toISOString() });
}

/** Frees the memory the staged file holds before the next file. */
export async function dropStaged(conn: DuckDBConnection): Promise<void> {
  for (const table of ['raw_lines', 'stg_trip_records', 'int_trips', 'scope_user_days', 'replaced_trips', ...DERIVE.map((m) => m.split('/')[1])]) {
    await conn.run(`drop table if exists temp.main.${quoteIdent(table as string)}`);
  }
}
