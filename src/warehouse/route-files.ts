import type { DuckDBConnection, DuckDBVector } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Params, paramsFor, queryFile, runFile, sqlText, stripComments } from '../db/sql.js';
import { RouteFileWriter, routeFile } from '../route/route-file.js';
import { fsyncDir } from '../fsutil.js';
import type { Paths } from '../data-folder.js';
import { addDays, todayIn } from '../time.js';
import { mergedPointsOfKeys } from './merged-points.js';

export interface RouteOptions {
  /** The warehouse's raw points (`warehouse/points/trip_date=…/`). */
  pointsDir: string;
  /** Where the API reads routes from (`published/routes/trip_date=…/v<version>.route`). */
  routesDir: string;
  /** The oldest trip date whose raw points are kept (retention): older dates get no route. */
  oldestDate: string;
  /**
   * Route files this job wrote before its publish (the load adds those writeStagedRoutes wrote):
   * the publish records them as checked as they are, without reading their index again.
   */
  written?: string[];
  /**
   * Look after the route files of the versions written since the last publish and the reported
   * ones only, not every file within retention (src/publish/route-step.ts): a continuous load's
   * batches between its full upkeeps.
   */
  incremental?: boolean;
}

/**
 * The jobs' route options: the same retention as the raw points (src/load/retention.ts prunes both
 * folders by trip date, UTC today minus DRIVING_POINTS_RETENTION_DAYS).
 */
export function routeOptions(
  paths: Pick<Paths, 'pointsDir' | 'routesDir'>,
  retentionDays: number,
  now: Date,
): RouteOptions {
  return {
    pointsDir: paths.pointsDir,
    routesDir: paths.routesDir,
    oldestDate: addDays(todayIn('UTC', now), -retentionDays),
    written: [],
  };
}

/**
 * Writes the route file of every (version, trip date) of the warehouse's trips within retention
 * (of the versions after `since` only, when given) that has none yet (src/route/route-file.ts):
 * the kept points of those trips, trip by trip. A file is never rewritten once it exists (the API
 * may be reading it; only a purge, or an upgrade to the current format, replaces one, by rename),
 * so the publish's cost follows the new versions, and a version published before routes existed
 * gets its file at the next publish; a damaged file removed before this
 * (src/publish/route-upkeep.ts) is written again here. A trip without kept points is listed
 * without points, so the newest file of a date that lists a trip holds its served copy.
 */
export async function writeRoutes(conn: DuckDBConnection, options: RouteOptions, since = 0): Promise<string[]> {
  const parts = await queryFile(conn, 'ops/publish/route_parts', { oldest: options.oldestDate, since });
  const merged = await mergedFiles(conn, options, parts.length);
  const written: string[] = [];
  for (const part of parts) {
    const tripDate = String(part['trip_date']);
    const version = Number(part['version']);
    if (existsSync(routeFile(options.routesDir, tripDate, version)) || merged(tripDate, version)) continue;
    const points = await pointsOfVersion(conn, options.pointsDir, tripDate, version, part['file_keys'] as string[]);
    if (await writeRouteFile(conn, options.routesDir, tripDate, version, points))
      written.push(routeFile(options.routesDir, tripDate, version));
  }
  return written;
}

/**
 * The query of a version's raw points of a trip date (sql/ops/publish/route_points.sql), or null
 * when none are kept: the points files of the loaded files `keys` its trips came from, by name,
 * and the merged files holding their rows (src/compact/points.ts), whose rows of other files, or
 * superseded by a re-derive, are left out.
 */
export async function pointsOfVersion(
  conn: DuckDBConnection,
  pointsDir: string,
  tripDate: string,
  version: number,
  keys: string[],
): Promise<{ sql: string; params: Params } | null> {
  const dir = join(pointsDir, `trip_date=${tripDate}`);
  const merged = await mergedPointsOfKeys(conn, dir, tripDate, keys);
  const files = [
    ...pointFiles(
      dir,
      keys.map((key) => `f${key.slice(0, 16)}_`),
    ),
    ...merged,
  ];
  if (files.length === 0) return null;
  if (merged.length === 0)
    return { sql: 'ops/publish/route_points', params: { files: listValue(files), version, trip_date: tripDate } };
  return {
    sql: 'ops/publish/route_points_merged',
    params: { files: listValue(files), keys: listValue(keys), version, trip_date: tripDate },
  };
}

/**
 * Whether a merged route file on disk stands for a version's file of a date (src/compact/routes.ts:
 * its trips' newest copies are in it), so that file is not written again.
 */
async function mergedFiles(
  conn: DuckDBConnection,
  options: RouteOptions,
  parts: number,
): Promise<(tripDate: string, version: number) => boolean> {
  if (parts === 0) return () => false;
  const spans = new Map<string, [first: number, version: number][]>();
  for (const row of await queryFile(conn, 'ops/compact/routes_spans', { oldest: options.oldestDate })) {
    const day = String(row['trip_date']);
    spans.set(day, [...(spans.get(day) ?? []), [Number(row['first_version']), Number(row['version'])]]);
  }
  return (tripDate, version) =>
    (spans.get(tripDate) ?? []).some(
      ([first, last]) =>
        first <= version && version <= last && existsSync(routeFile(options.routesDir, tripDate, last)),
    );
}

/**
 * At load, right after a file's merge committed `version`: the route files of that version (one
 * per trip date within retention) from the file's staged points, still in the connection's temp
 * tables (sql/ops/load/route_points_staged.sql), instead of the publish reading them back from the
 * raw-point Parquet. Same bytes as the publish would write. Returns the files written.
 */
export async function writeStagedRoutes(
  conn: DuckDBConnection,
  options: Pick<RouteOptions, 'routesDir' | 'oldestDate'>,
  version: number,
): Promise<string[]> {
  const dates = await queryFile(conn, 'ops/load/staged_route_dates', { oldest: options.oldestDate });
  const written: string[] = [];
  for (const row of dates) {
    const tripDate = String(row['d']);
    if (
      await writeRouteFile(conn, options.routesDir, tripDate, version, {
        sql: 'ops/load/route_points_staged',
        params: { version, trip_date: tripDate },
      })
    )
      written.push(routeFile(options.routesDir, tripDate, version));
  }
  return written;
}

/**
 * The route file of (`tripDate`, `version`), unless it exists: the version's trips of that date
 * (sql/ops/publish/route_trips.sql) with the points `points` streams, or every trip without points
 * when there are none. Written to a temp name, fsynced and renamed; false when it existed.
 */
async function writeRouteFile(
  conn: DuckDBConnection,
  routesDir: string,
  tripDate: string,
  version: number,
  points: { sql: string; params: Params } | null,
): Promise<boolean> {
  const target = routeFile(routesDir, tripDate, version);
  if (existsSync(target)) return false;
  // its drivers are entered before the file exists: a purge must never meet a route file it does not know
  await runFile(conn, 'ops/publish/index_route_file', { version, trip_date: tripDate });
  // under this name a merged file stood for older versions too: this one stands for its own only
  await runFile(conn, 'ops/compact/routes_span_reset', { version, trip_date: tripDate });
  const dir = join(routesDir, `trip_date=${tripDate}`);
  mkdirSync(dir, { recursive: true });
  const writer = new RouteFileWriter(`${target}.tmp`);
  try {
    const trips = (await queryFile(conn, 'ops/publish/route_trips', { version, trip_date: tripDate })).map(
      (r) => [String(r['app_id']), String(r['trip_id'])] as const,
    );
    if (points) await copyTrips(conn, writer, trips, points.sql, points.params);
    else
      for (const [app, trip] of trips)
        writer.add(app, trip, {
          t: new Float64Array(0),
          lat: new Float64Array(0),
          lng: new Float64Array(0),
          speed: new Float64Array(0),
        });
    writer.finish(target);
  } catch (error) {
    writer.abort();
    throw error;
  }
  fsyncDir(dir);
  return true;
}

/**
 * Streams `sqlName` (rows of trip number, time, lat, lng, speed, as sql/ops/publish/route_points.sql)
 * into the writer, one trip at a time, reading each column from DuckDB's vectors: numbers only, no
 * value built per point but the doubles themselves.
 */
async function copyTrips(
  conn: DuckDBConnection,
  writer: RouteFileWriter,
  trips: readonly (readonly [string, string])[],
  sqlName: string,
  params: Params,
): Promise<void> {
  const text = stripComments(sqlText(sqlName));
  const result = await conn.stream(text, paramsFor(text, params));
  const points = new TripPoints(writer, trips);
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const [k, t, lat, lng, speed] = [0, 1, 2, 3, 4].map((i) => chunk.getColumnVector(i)) as [
      DuckDBVector<number>,
      DuckDBVector<number>,
      DuckDBVector<number>,
      DuckDBVector<number>,
      DuckDBVector<number>,
    ];
    // rowCount asks the native chunk each time it is read: once per chunk, not once per point
    points.addRows(chunk.rowCount, k, t, lat, lng, speed);
  }
  points.flush();
}

/**
 * The points of the trip being read, handed to the writer when the next trip starts. A class, not
 * a loop over closures in copyTrips: optimized code of a loop compiled while it runs is tied to
 * that call's closures and thrown away once they are gone, so each batch of a continuous load
 * compiled it again.
 */
class TripPoints {
  private current = 0;
  private n = 0;
  private cols = [new Float64Array(4096), new Float64Array(4096), new Float64Array(4096), new Float64Array(4096)];

  constructor(
    private readonly writer: RouteFileWriter,
    private readonly trips: readonly (readonly [string, string])[],
  ) {}

  addRows(
    rows: number,
    k: DuckDBVector<number>,
    t: DuckDBVector<number>,
    lat: DuckDBVector<number>,
    lng: DuckDBVector<number>,
    speed: DuckDBVector<number>,
  ): void {
    for (let i = 0; i < rows; i++) {
      const trip = k.getItem(i) as number;
      if (trip !== this.current) {
        this.flush();
        this.current = trip;
      }
      const time = t.getItem(i);
      const n = this.n;
      // a trip that kept no point comes as one row without a point; a time seen just before is
      // the same point from a second copy of the trip's file
      if (time === null || (n > 0 && time === (this.cols[0] as Float64Array)[n - 1])) continue;
      if (n === (this.cols[0] as Float64Array).length)
        this.cols = this.cols.map((c) => {
          const grown = new Float64Array(c.length * 2);
          grown.set(c);
          return grown;
        });
      const cols = this.cols as [Float64Array, Float64Array, Float64Array, Float64Array];
      cols[0][n] = time;
      cols[1][n] = lat.getItem(i) as number;
      cols[2][n] = lng.getItem(i) as number;
      cols[3][n] = speed.getItem(i) as number;
      this.n = n + 1;
    }
  }

  /** Hands the trip read so far to the writer. */
  flush(): void {
    const trip = this.trips[this.current - 1];
    const [t, lat, lng, speed] = this.cols as [Float64Array, Float64Array, Float64Array, Float64Array];
    if (trip)
      this.writer.add(trip[0], trip[1], {
        t: t.slice(0, this.n),
        lat: lat.slice(0, this.n),
        lng: lng.slice(0, this.n),
        speed: speed.slice(0, this.n),
      });
    this.n = 0;
  }
}

function pointFiles(dir: string, prefixes: string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.parquet') && prefixes.some((p) => name.startsWith(p)))
    .sort()
    .map((name) => join(dir, name));
}
