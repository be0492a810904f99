import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listValue } from '../db/duckdb.js';
import { queryFile, runFile, runScript } from '../db/sql.js';

/** An unmerged raw-points file: `f<first 16 hex digits of its loaded file's key>_….parquet`. */
export const UNMERGED_POINTS = /^f([0-9a-f]{16})_/;

/** A merged raw-points file of a trip date (src/compact/points.ts): `m<n>.parquet`. */
export const MERGED_POINTS = /^m(\d+)\.parquet$/;

/**
 * The merged raw-points files of a trip date's folder `dir` holding live rows of any of `keys`
 * (loaded files' keys), by path: a reader of those keys' points reads them beside the unmerged
 * files named by the keys, and takes from them the rows whose `source_key` is one of the keys.
 */
export async function mergedPointsOfKeys(
  conn: DuckDBConnection,
  dir: string,
  tripDate: string,
  keys: string[],
): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await queryFile(conn, 'ops/compact/points_of_keys', { trip_date: tripDate, file_keys: listValue(keys) });
  return rows.map((r) => join(dir, String(r['name']))).filter((path) => existsSync(path));
}

/** The merged raw-points files of every trip date holding live rows of loaded file `key`: date and path. */
export async function mergedPointsOfKey(
  conn: DuckDBConnection,
  pointsDir: string,
  key: string,
): Promise<{ tripDate: string; path: string }[]> {
  return (await queryFile(conn, 'ops/compact/points_of_key', { file_key: key }))
    .map((r) => ({
      tripDate: String(r['trip_date']),
      path: join(pointsDir, `trip_date=${String(r['trip_date'])}`, String(r['name'])),
    }))
    .filter(({ path }) => existsSync(path));
}

/**
 * Loaded file `key`'s points were written anew (a re-derive): its rows in merged files are no
 * longer read, as its earlier unmerged files are removed (sql/ops/compact/points_supersede.sql).
 */
export async function supersedeMergedPoints(conn: DuckDBConnection, key: string): Promise<void> {
  await runFile(conn, 'ops/compact/points_supersede', { file_key: key });
}

/**
 * A re-derived file's points of the trips kept as stored (temp table rederive_kept_as_stored) from
 * its earlier files of one trip date: its unmerged files and its live rows in merged ones, once
 * each, into temp table rederive_kept_point_rows.
 */
export async function keptPointsOf(
  conn: DuckDBConnection,
  unmerged: string[],
  merged: string[],
  key: string,
): Promise<void> {
  if (unmerged.length > 0) await runFile(conn, 'ops/load/rederive_kept_points', { files: listValue(unmerged) });
  if (merged.length === 0) return;
  await runFile(conn, 'ops/compact/points_kept_merged', { files: listValue(merged), file_key: key });
  await runScript(conn, unmerged.length > 0 ? 'ops/compact/points_kept_union' : 'ops/compact/points_kept_only');
}
