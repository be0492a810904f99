import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { queryFile, type Row } from '../db/sql.js';
import { MERGED_POINTS, UNMERGED_POINTS } from '../warehouse/merged-points.js';

/**
 * Which files a purge opens (docs/decisions.md, Deletion, the purge's index): the files the index
 * names for the drivers in temp table purge_requests (indexed_files, file_drivers,
 * route_file_drivers, written by the load and the route writer), and every file it does not know, which may hold anyone. Each
 * lists folders only: no file is read to decide.
 */

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ARCHIVED = /\.(ndjson|jsonl|json)(\.gz)?$|\.parquet$/i;

/** The trip dates whose raw-points and route files may hold the drivers (sql/ops/purge/driver_days.sql). */
export async function driverDays(conn: DuckDBConnection): Promise<string[]> {
  return (await queryFile(conn, 'ops/purge/driver_days')).map((r) => String(r['trip_date']));
}

/**
 * The archived landing files to open: those of `landing/loaded/<day>/` the index names for the
 * drivers or does not know, and every file of `landing/failed/<day>/` (a file that failed was
 * never merged, so never indexed).
 */
export async function archivesToOpen(conn: DuckDBConnection, landingDir: string): Promise<string[]> {
  const archived = entries(join(landingDir, 'loaded'), (n) => ARCHIVED.test(n));
  const failed = entries(join(landingDir, 'failed'), (n) => ARCHIVED.test(n)).map((e) => e.path);
  const oldest = archived.reduce<string | null>(
    (min, { day }) => (DAY.test(day) && (min === null || day < min) ? day : min),
    null,
  );
  if (oldest === null) return [...archived.map((e) => e.path), ...failed];
  const keyOf = (r: Row) => `${String(r['day'])}/${String(r['name'])}`;
  // the index's knowledge comes out (a row per archived file), not the listing in: binding a list
  // of every archived file's name cost more than the query
  const known = new Set((await queryFile(conn, 'ops/purge/archives_known', { oldest })).map(keyOf));
  const holding = new Set((await queryFile(conn, 'ops/purge/archives_holding')).map(keyOf));
  const open = archived.filter(({ day, name }) => {
    // a folder the load did not make (not a day) is not in the index
    if (!DAY.test(day)) return true;
    // moveLanded names a file `<ms>-<name>` when `<name>` is taken: it may have been loaded as either
    const candidates = [...new Set([name, name.replace(/^\d+-/, '')])].map((n) => `${day}/${n}`);
    return candidates.some((c) => holding.has(c)) || !candidates.some((c) => known.has(c));
  });
  return [...open.map((e) => e.path), ...failed];
}

/** The raw-points files of `days` to open: those of the drivers' loaded files, and any the index does not know. */
export async function pointFilesToOpen(conn: DuckDBConnection, pointsDir: string, days: string[]): Promise<string[]> {
  if (days.length === 0) return [];
  const known = new Set((await queryFile(conn, 'ops/purge/points_known')).map((r) => String(r['prefix'])));
  const holding = new Set(
    (await queryFile(conn, 'ops/purge/points_holding')).map((r) => `${String(r['day'])}/${String(r['prefix'])}`),
  );
  // a merged file (src/compact/points.ts) is known by the loaded files whose rows it holds
  const mergedKnown = new Set((await queryFile(conn, 'ops/compact/points_known')).map(dayName));
  const mergedHolding = new Set((await queryFile(conn, 'ops/compact/points_holding')).map(dayName));
  const open: string[] = [];
  for (const day of days) {
    const dir = join(pointsDir, `trip_date=${day}`);
    for (const name of filesIn(dir).filter((n) => n.endsWith('.parquet'))) {
      if (MERGED_POINTS.test(name)) {
        const at = `${day}/${name}`;
        if (!mergedKnown.has(at) || mergedHolding.has(at)) open.push(join(dir, name));
        continue;
      }
      // a name not of the load's (`f<16 hex of the file key>_`) was written by something else
      const prefix = UNMERGED_POINTS.exec(name)?.[1];
      if (prefix === undefined || !known.has(prefix) || holding.has(`${day}/${prefix}`)) open.push(join(dir, name));
    }
  }
  return open;
}

const dayName = (r: Row) => `${String(r['day'])}/${String(r['name'])}`;

/** The route files of `days` to open: those that list a driver's trips, and any the index does not know. */
export async function routeFilesToOpen(conn: DuckDBConnection, routesDir: string, days: string[]): Promise<string[]> {
  if (days.length === 0) return [];
  const keyOf = (r: Row) => `${String(r['day'])}/${String(r['version'])}`;
  const known = new Set((await queryFile(conn, 'ops/purge/routes_known', { days: listValue(days) })).map(keyOf));
  const holding = new Set((await queryFile(conn, 'ops/purge/routes_holding')).map(keyOf));
  const open: string[] = [];
  for (const day of days) {
    const dir = join(routesDir, `trip_date=${day}`);
    for (const name of filesIn(dir).filter((n) => n.endsWith('.route'))) {
      const version = /^v(\d{1,15})\.route$/.exec(name)?.[1];
      const key = version === undefined ? null : `${day}/${Number(version)}`;
      if (key === null || !known.has(key) || holding.has(key)) open.push(join(dir, name));
    }
  }
  return open;
}

/** The files of each day folder under `root`, by name, in order. */
function entries(root: string, wanted: (name: string) => boolean): { path: string; day: string; name: string }[] {
  const out: { path: string; day: string; name: string }[] = [];
  for (const day of filesIn(root).sort()) {
    const dir = join(root, day);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of filesIn(dir).sort())
      if (!name.startsWith('.') && wanted(name)) out.push({ path: join(dir, name), day, name });
  }
  return out;
}

function filesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
