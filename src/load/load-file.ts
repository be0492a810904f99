import { mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, nextBatchId, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { installMacros } from '../db/macros.js';
import { materialize, queryFile, quoteLiteral, runFile, sqlText, sqlWith } from '../db/sql.js';
import { dropStaged, formatOf, stageFile, type StagePath } from './stage-file.js';
import { scanFile, type LineIndex } from './scan-file.js';
import { assertUnchanged, identityOf, removePointFiles, type FileIdentity } from './file-identity.js';
import { mergeStaged } from './merge-staged.js';
import { settleResends } from './resends.js';
import { isSdkUploadFile } from './uploads.js';
import { emptyFileReport, type FileReport } from './report.js';
import { writeStagedRoutes, type RouteOptions } from '../warehouse/route-files.js';
import { firstLine } from '../errors.js';
import { POINTS_PARQUET } from './points-parquet.js';
import { indexFileDrivers } from './file-drivers.js';
import { copyTo } from '../db/statements.js';

export interface LoadFileContext {
  pointsDir: string;
  now: Date;
  /** NDJSON text parsed at once when a file is read line by line (default 64 MiB). */
  parseBytes?: number;
  /** Points derived at once by int_points; a larger file is derived a part at a time. */
  pointsPerPart?: number;
  /** Called between a file's staging and its merge (a test appends to the file here). */
  afterStage?: (file: string, conn: DuckDBConnection) => void | Promise<void>;
  /**
   * Where the route files go: each file's merge is followed by the route files of its version,
   * from the points still staged (the publish writes any that are missing, from the Parquet).
   */
  routes?: Pick<RouteOptions, 'routesDir' | 'oldestDate' | 'written'>;
  /** The day folder of the landing archive the caller moves each loaded file to (`landing/loaded/<day>/`), if it does. */
  archiveDay?: string;
  /**
   * What a file read stands for when it is not itself (a slice of a partner's file,
   * src/load/slices.ts): the file its records name, its ledger key, and the moment its records are
   * judged against; undefined for a file that is itself.
   */
  standsFor?: (file: string) => StandsFor | undefined;
}

/** What a file read stands for when it is a slice of a partner's file (src/load/slices.ts). */
export interface StandsFor {
  source: string;
  key: string;
  now: Date;
  /** Recorded with the slice's merge (loaded_slices), for a re-derivation to cut it again. */
  slice: { sourceKey: string; start: number; end: number; firstLine: number };
}

/** One file's outcome, in input order; `error` when it could not be loaded at all. */
export type FileOutcome =
  | { file: string; report: FileReport; error?: undefined; identity?: FileIdentity }
  | { file: string; report?: undefined; error: unknown; identity?: undefined };

/**
 * Loads files in order, deriving up to `concurrency` of them at once, each on its own connection
 * (temp tables are per connection), and merging them one at a time in input order.
 *
 * Why: a file's derivation runs mostly on one core (its few hundred records fill a single row
 * group, so the unnest and the JSON parse are one pipeline), so a second file uses the second core.
 * Merging in input order keeps "a later file's copy of a trip wins". The only warehouse facts a
 * derivation reads that a load can change are trip owners ('trip_id_taken'); a file whose staged
 * trips meet a trip merged after its derivation began is derived again before its merge.
 */
export async function loadFiles(
  wh: Warehouse,
  files: string[],
  ctx: LoadFileContext & { concurrency: number; onStart?: (file: string, index: number) => void },
  onFile: (outcome: FileOutcome, index: number) => void | Promise<void>,
): Promise<void> {
  const lanes = Math.max(1, Math.min(ctx.concurrency, files.length));
  const connections: DuckDBConnection[] = [wh.conn];
  try {
    for (let i = 1; i < lanes; i++) connections.push(await stagingConnection(wh));
    let next = 0;
    let stopped: unknown;
    // each file waits for the one before it to be merged (or to fail) before merging itself, and
    // to be reported before reporting itself; its route files are written after its merge lets
    // the next file merge, so they are off the chain of merges
    const merged: Promise<void>[] = [];
    const reported: Promise<void>[] = [];
    const lane = async (conn: DuckDBConnection): Promise<void> => {
      while (next < files.length && stopped === undefined) {
        const index = next++;
        const file = files[index] as string;
        ctx.onStart?.(file, index);
        const previous = merged[index - 1] ?? Promise.resolve();
        const previousReported = reported[index - 1] ?? Promise.resolve();
        let release!: () => void;
        let releaseReport!: () => void;
        merged[index] = new Promise((done) => (release = done));
        reported[index] = new Promise((done) => (releaseReport = done));
        try {
          // `release` lets the next file merge once this one's merge is done; a file that never
          // merged (skipped, failed) lets it in `finally`
          const outcome = await loadOne(conn, file, ctx, previous, release);
          // the previous file is reported only after its merge chain was released
          await previousReported;
          if (stopped === undefined) await onFile(outcome, index);
        } catch (error) {
          stopped ??= error;
        } finally {
          release();
          await dropStaged(conn).catch(() => undefined);
          releaseReport();
        }
      }
    };
    await Promise.all(connections.map(lane));
    if (stopped !== undefined) throw stopped;
  } finally {
    for (const conn of connections.slice(1)) conn.closeSync();
  }
}

async function stagingConnection(wh: Warehouse): Promise<DuckDBConnection> {
  const conn = await wh.db.instance.connect();
  // the session settings and temp macros of openDatabase/openWarehouse are per connection
  await runFile(conn, 'ops/db/time_zone_utc');
  await installMacros(conn);
  return conn;
}

/** `merged` is called once the file's merge has committed or failed (the next file may merge). */
async function loadOne(
  conn: DuckDBConnection,
  file: string,
  given: LoadFileContext,
  previous: Promise<void>,
  merged: () => void,
): Promise<FileOutcome> {
  const source = resolve(file);
  const as = given.standsFor?.(file);
  const ctx = as ? { ...given, now: as.now } : given;
  // the file the records name (the quarantine's file and line): the partner's for a slice
  const named = as?.source ?? source;
  let key: string | undefined;
  try {
    // what the file is now; its merge commits only if it is still exactly that (changed_during_load)
    const identity = identityOf(source);
    const scan = await scanFile(source, formatOf(source) === 'ndjson', identity);
    key = as?.key ?? scan.key;
    if (await alreadyLoaded(conn, key)) return { file, report: emptyFileReport(named, true), identity };
    // the trips staging saw are those of batches up to this one (merge_file.sql looks after it)
    let stagedAfter = await lastBatchId(conn);
    let how = await stage(conn, source, named, key, scan.lines, ctx);
    await ctx.afterStage?.(source, conn);
    await previous;
    // checked again in turn: the same bytes may come twice in one run
    if (await alreadyLoaded(conn, key)) return { file, report: emptyFileReport(named, true), identity };
    if (
      (await lastBatchId(conn)) > stagedAfter &&
      (await ownersChanged(conn, stagedAfter, isSdkUploadFile(basename(source))))
    ) {
      await dropStaged(conn);
      stagedAfter = await lastBatchId(conn);
      how = await stage(conn, source, named, key, scan.lines, ctx);
    }
    const report = await merge(conn, source, named, key, identity, ctx, stagedAfter, as).finally(merged);
    // the file is committed whatever happens here: a route file not written now (a full disk, a
    // kill) is written by the publish from the raw-point Parquet, which fails the publish loudly
    if (ctx.routes && report.version !== null) {
      // handed to the publish, which records them as written instead of reading them back
      const routes = ctx.routes;
      await writeStagedRoutes(conn, routes, report.version).then(
        (files) => routes.written?.push(...files),
        (error: unknown) => (report.routesDeferred = firstLine(error)),
      );
    }
    // what the merge verified the file to be: a write after this is seen (src/load/retake.ts)
    return { file, report: { ...report, read: how }, identity };
  } catch (error) {
    // nothing of a failed file is kept: its merge rolled back (a changed file, a failing check);
    // the points it wrote before the transaction go too, unless the same bytes were loaded as
    // another file of this run (whose points share the names)
    if (key !== undefined && !(await alreadyLoaded(conn, key).catch(() => true))) removePointFiles(ctx.pointsDir, key);
    return { file, error };
  }
}

async function alreadyLoaded(conn: DuckDBConnection, key: string): Promise<boolean> {
  return (await queryFile(conn, 'ops/load/file_loaded', { key })).length > 0;
}

async function lastBatchId(conn: DuckDBConnection): Promise<number> {
  const [row] = await queryFile(conn, 'ops/load/batch_last');
  return Number(row?.['b'] ?? 0);
}

/**
 * Whether a trip merged since batch `since` now belongs to another user than a staged record says,
 * or, for an SDK upload, is one the file sends (its records are compared with the stored copy).
 */
async function ownersChanged(conn: DuckDBConnection, since: number, sdk: boolean): Promise<boolean> {
  const [row] = await queryFile(conn, 'ops/load/owners_changed', { since, sdk });
  return Boolean(row?.['changed']);
}

/** Derives the file into temp tables of `conn` and writes its kept points to Parquet. */
async function stage(
  conn: DuckDBConnection,
  source: string,
  named: string,
  key: string,
  lines: LineIndex | undefined,
  ctx: LoadFileContext,
): Promise<StagePath> {
  const how = await stageFile(conn, source, lines, ctx.now, ctx.parseBytes, ctx.pointsPerPart);
  await materialize(conn, 'models/intermediate/int_trips', {
    source_file: named,
    loaded_at: ctx.now.toISOString(),
    file_key: key,
  });
  await settleResends(conn, source, key, lines, how);
  await writePoints(conn, ctx.pointsDir, key);
  return how;
}

/**
 * Points go to Parquet before the transaction under a name derived from the file's hash, so a
 * retry after a crash overwrites the same files instead of adding copies. A file whose trips all
 * start on one day (the usual day file) is written straight into that day's folder: the
 * partitioned write cost a sixth more for the same file.
 */
async function writePoints(conn: DuckDBConnection, pointsDir: string, key: string): Promise<void> {
  const name = `f${key.slice(0, 16)}_`;
  const days = await queryFile(conn, 'ops/load/staged_days');
  if (days.length === 1) {
    const dir = join(pointsDir, `trip_date=${String(days[0]?.['d'])}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}0.parquet`);
    const points = sqlWith('ops/load/write_points_one_day', { points: sqlText('ops/load/write_points') });
    await copyTo(conn, { query: points }, file, POINTS_PARQUET);
    return;
  }
  await copyTo(
    conn,
    { query: sqlText('ops/load/write_points') },
    pointsDir,
    `${POINTS_PARQUET}, partition_by (trip_date), overwrite_or_ignore true, ` +
      `filename_pattern ${quoteLiteral(`${name}{i}`)}`,
  );
}

/**
 * Merges the staged file on `conn` into the warehouse in ONE transaction together with its ledger
 * row and a new version, so a load killed at any point either has all of the file or none of it,
 * and the file is simply loaded again.
 */
async function merge(
  conn: DuckDBConnection,
  source: string,
  named: string,
  key: string,
  identity: FileIdentity,
  ctx: LoadFileContext,
  stagedAfter: number,
  as?: StandsFor,
): Promise<FileReport> {
  const version = (await warehouseVersion(conn)) + 1;
  const batchId = await nextBatchId(conn);
  const loadedAt = ctx.now.toISOString();
  const params = { version, batch_id: batchId, source_file: named, loaded_at: loadedAt, staged_after: stagedAfter };
  const report = emptyFileReport(named, false);
  report.version = version;
  await inTransaction(conn, async () => {
    await mergeStaged(conn, params, report);
    await runFile(conn, 'ops/load/loaded_file_record', {
      key,
      path: named,
      bytes: identity.size,
      batch_id: batchId,
      loaded_at: loadedAt,
    });
    await runFile(conn, 'ops/load/batch_record', {
      batch_id: batchId,
      kind: 'load',
      path: named,
      version,
      started: loadedAt,
      report: JSON.stringify(report),
    });
    // a slice is archived as the partner's whole file, under its name
    // a slice's partner file is archived whole under the day its plan was made (src/load/slices.ts)
    const archiveDay = ctx.archiveDay && as ? as.now.toISOString().slice(0, 10) : ctx.archiveDay;
    await indexFileDrivers(conn, key, archiveDay ? { day: archiveDay, name: basename(named) } : null);
    if (as)
      await runFile(conn, 'ops/load/record_slice', {
        file_key: key,
        source_key: as.slice.sourceKey,
        source_path: as.source,
        start_byte: as.slice.start,
        end_byte: as.slice.end,
        first_line: as.slice.firstLine,
      });
    await setWarehouseVersion(conn, version);
    // last, inside the transaction: a file that changed since its load began rolls all of it back
    assertUnchanged(source, identity);
  });
  return report;
}
