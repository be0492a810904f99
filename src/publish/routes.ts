import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '@duckdb/node-api';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { paramsFor, queryFile, sqlText, stripComments, type Params } from '../db/sql.js';
import { RouteFileWriter, routeFile } from '../route/route-file.js';
import { fsyncDir } from '../fsutil.js';
import type { Paths } from '../config.js';
import { addDays, todayIn } from '../time.js';

export interface RouteOptions {
  /** The warehouse's raw points (`warehouse/points/trip_date=…/`). */
  pointsDir: string;
  /** Where the API reads routes from (`published/routes/trip_date=…/v<version>.route`). */
  routesDir: string;
  /** The oldest trip date whose raw points are kept (retention): older dates get no route. */
  oldestDate: string;
}

/**
 * The jobs' route options: the same retention as the raw points (src/load/retention.ts prunes both
 * folders by trip date, UTC today minus DRIVING_POINTS_RETENTION_DAYS).
 */
export function routeOptions(paths: Pick<Paths, 'pointsDir' | 'routesDir'>, retentionDays: number, now: Date): RouteOptions {
  return { pointsDir: paths.pointsDir, routesDir: paths.routesDir, oldestDate: addDays(todayIn('UTC', now), -retentionDays) };
}

/**
 * Writes the route file of every (version, trip date) of the warehouse's trips within retention
 * that has none yet (src/route/route-file.ts): the kept points of those trips, trip by trip. A
 * file is never rewritten once it exists (the API may be reading it; only a purge replaces one,
 * by rename), so the publish's cost follows the new versions, and a version published before
 * routes existed gets its file at the next publish. A trip without kept points has no entry: the
 * file's presence says its route is served, empty.
 */
export async function writeRoutes(conn: DuckDBConnection, options: RouteOptions): Promise<number> {
  const parts = await queryFile(conn, 'publish/route_parts', { oldest: options.oldestDate });
  let written = 0;
  for (const part of parts) {
    const tripDate = String(part['trip_date']);
    const version = Number(part['version']);
    const target = routeFile(options.routesDir, tripDate, version);
    if (existsSync(target)) continue;
    const dir = join(options.routesDir, `trip_date=${tripDate}`);
    mkdirSync(dir, { recursive: true });
    const prefixes = (part['file_keys'] as string[]).map((key) => `f${key.slice(0, 16)}_`);
    const files = pointFiles(join(options.pointsDir, `trip_date=${tripDate}`), prefixes);
    const writer = new RouteFileWriter(`${target}.tmp`);
    try {
      await (files.length > 0
        ? copyTrips(conn, writer, 'publish/route_points', { files: listValue(files), version, trip_date: tripDate })
        : copyTrips(conn, writer, 'publish/route_trips', { version, trip_date: tripDate }));
      writer.finish(target);
    } catch (error) {
      writer.abort();
      throw error;
    }
    fsyncDir(dir);
    written++;
  }
  return written;
}

/** Streams sql/publish/route_points.sql or route_trips.sql (sorted by trip) into the writer, one trip at a time. */
async function copyTrips(conn: DuckDBConnection, writer: RouteFileWriter, file: string, params: Params): Promise<void> {
  const text = stripComments(sqlText(file));
  const result = await conn.stream(text, paramsFor(text, params));
  let key: [string, string] | null = null;
  let t: number[] = [];
  let lat: number[] = [];
  let lng: number[] = [];
  let speed: number[] = [];
  const flush = () => {
    if (key) writer.add(key[0], key[1], { t: Float64Array.from(t), lat: Float64Array.from(lat), lng: Float64Array.from(lng), speed: Float64Array.from(speed) });
    t = []; lat = []; lng = []; speed = [];
  };
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const [apps, trips, ts, lats, lngs, speeds] = chunk.getColumns() as [string[], string[], number[], number[], number[], number[]];
    for (let i = 0; i < chunk.rowCount; i++) {
      if (!key || key[0] !== apps[i] || key[1] !== trips[i]) {
        flush();
        key = [apps[i] as string, trips[i] as string];
      }
      // a trip that kept no point comes as one row without a point; a time seen just before is
      // the same point from a second copy of the trip's file
      if (ts[i] === null || ts[i] === t[t.length - 1]) continue;
      t.push(ts[i] as number);
      lat.push(lats[i] as number);
      lng.push(lngs[i] as number);
      speed.push(speeds[i] as number);
    }
  }
  flush();
}

function pointFiles(dir: string, prefixes: string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.parquet') && prefixes.some((p) => name.startsWith(p)))
    .sort()
    .map((name) => join(dir, name));
}
