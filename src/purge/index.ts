import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { queryFile } from '../db/sql.js';

/**
 * Which files a purge opens (docs/decisions.md, Deletion, the purge's index): the files the index
 * names for the drivers in temp table purge_requests (file_drivers, route_file_drivers, written
 * by the load and the route writer), and every file it does not know, which may hold anyone. Each
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
  const paths: string[] = [];
  const days: string[] = [];
  const names: string[] = [];
  const archived = entries(join(landingDir, 'loaded'), (n) => ARCHIVED.test(n));
  // a folder the load did not make (not a day) is not in the index: its files are opened
  const oddDays = archived.filter((e) => !DAY.test(e.day)).map((e) => e.path);
  for (const { path, day, name } of archived) {
    if (!DAY.test(day)) continue;
    // moveLanded names a file `<ms>-<name>` when `<name>` is taken: it may have been loaded as either
    for (const candidate of new Set([name, name.replace(/^\d+-/, '')])) {
      paths.push(path);
      days.push(day);
      names.push(candidate);
    }
  }
  const loaded = paths.length === 0 ? [] : await selected(conn, 'ops/purge/archives_to_open', { paths, days, names });
  const failed = entries(join(landingDir, 'failed'), (n) => ARCHIVED.test(n)).map((e) => e.path);
  return [...loaded, ...oddDays, ...failed];
}

/** The raw-points files of `days` to open: those of the drivers' loaded files, and any the index does not know. */
export async function pointFilesToOpen(conn: DuckDBConnection, pointsDir: string, days: string[]): Promise<string[]> {
  const paths: string[] = [];
  const onDays: string[] = [];
  const prefixes: (string | null)[] = [];
  for (const day of days) {
    const dir = join(pointsDir, `trip_date=${day}`);
    for (const name of filesIn(dir).filter((n) => n.endsWith('.parquet'))) {
      paths.push(join(dir, name));
      onDays.push(day);
      prefixes.push(/^f([0-9a-f]{16})_/.exec(name)?.[1] ?? null);
    }
  }
  if (paths.length === 0) return [];
  return selected(conn, 'ops/purge/points_to_open', { paths, days: onDays, prefixes });
}

/** The route files of `days` to open: those that list a driver's trips, and any the index does not know. */
export async function routeFilesToOpen(conn: DuckDBConnection, routesDir: string, days: string[]): Promise<string[]> {
  const paths: string[] = [];
  const onDays: string[] = [];
  const versions: (number | null)[] = [];
  for (const day of days) {
    const dir = join(routesDir, `trip_date=${day}`);
    for (const name of filesIn(dir).filter((n) => n.endsWith('.route'))) {
      paths.push(join(dir, name));
      onDays.push(day);
      const version = /^v(\d{1,15})\.route$/.exec(name)?.[1];
      versions.push(version === undefined ? null : Number(version));
    }
  }
  if (paths.length === 0) return [];
  return selected(conn, 'ops/purge/routes_to_open', { paths, days: onDays, versions });
}

async function selected(
  conn: DuckDBConnection,
  sql: string,
  lists: Record<string, (string | number | null)[]>,
): Promise<string[]> {
  const params = Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, listValue(v)]));
  return (await queryFile(conn, sql, params)).map((r) => String(r['path']));
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
