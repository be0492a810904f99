import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { listValue } from '../db/duckdb.js';
import { queryFile, runScript } from '../db/sql.js';
import { fsyncDir } from '../fsutil.js';
import { mergeRouteFiles, RouteFileDamagedError, RouteFileWriter, routeFile } from '../route/route-file.js';
import { fileIdentity } from '../serving/checksum.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { routeFilesToMerge, type RouteFileSize } from './route-groups.js';

export interface RouteCompaction {
  /** Merges done (one a trip date's run of files). */
  merges: number;
  /** Source files removed once their merged file was in place. */
  removed: number;
  /** Bytes read from the sources and written to the merged files. */
  bytesRead: number;
  bytesWritten: number;
  /** Whether a date still has files to merge (the merges stopped at `maxMerges`). */
  pending: boolean;
}

const ROUTE_NAME = /^v(\d{1,15})\.route$/;

/**
 * Merges each trip date's route files into few (src/compact/route-groups.ts decides which), at most
 * `maxMerges` merges a call, so a step between two batches holds the stream back by a bounded
 * amount. Only files of versions up to `servedVersion` are merged, and only while the API serves
 * that version alone (the caller makes sure): a snapshot that was served before it would look for
 * a trip in the files of its own versions, which a merge removes.
 *
 * A merge, crash-safe at every point: the merged file is written under a temp name (the newest
 * copy of every trip the sources list, every block checked); its drivers and span are entered in
 * the purge's index and the publish's record (sql/ops/compact/routes_index_merged.sql); it is
 * fsynced and renamed over the newest source's name, so the API, which serves a trip from the
 * newest file that lists it, finds the same copy before and after; then the other sources are
 * removed and forgotten. Killed before the rename, the sources are as they were and the index
 * names the merged file's name for more drivers than it holds (a purge opens it, needlessly);
 * killed after it, the next call merges the same run again.
 */
export async function compactRoutes(
  conn: DuckDBConnection,
  routesDir: string,
  options: {
    servedVersion: number;
    oldest: string;
    settledBefore: string;
    maxMerges: number;
    progress?: (m: string) => void;
  },
): Promise<RouteCompaction> {
  const out: RouteCompaction = { merges: 0, removed: 0, bytesRead: 0, bytesWritten: 0, pending: false };
  for (const day of listDates(routesDir)) {
    if (day < options.oldest) continue;
    const dir = join(routesDir, `trip_date=${day}`);
    const files = routeFilesOf(dir, options.servedVersion);
    const run = routeFilesToMerge(files, day < options.settledBefore);
    if (run.length === 0) continue;
    if (out.merges >= options.maxMerges) {
      out.pending = true;
      break;
    }
    const sizes = new Map(files.map((f) => [f.version, f.bytes]));
    const merged = await mergeRun(conn, routesDir, day, run, options.progress);
    if (merged === null) continue;
    out.merges++;
    out.removed += run.length - 1;
    out.bytesRead += run.reduce((sum, v) => sum + (sizes.get(v) ?? 0), 0);
    out.bytesWritten += merged;
  }
  return out;
}

/** One date's run of files merged into the newest one's name; the merged file's bytes, or null when it was left as it is. */
async function mergeRun(
  conn: DuckDBConnection,
  routesDir: string,
  day: string,
  versions: number[],
  progress?: (m: string) => void,
): Promise<number | null> {
  const newest = versions[versions.length - 1] as number;
  const target = routeFile(routesDir, day, newest);
  const sources = [...versions].reverse().map((v) => routeFile(routesDir, day, v));
  const writer = new RouteFileWriter(`${target}.merge.tmp`);
  try {
    let trips: [string, string][];
    try {
      trips = mergeRouteFiles(sources, writer);
    } catch (error) {
      if (!(error instanceof RouteFileDamagedError)) throw error;
      // the publish's upkeep finds it and writes it again from the raw points; merged after that
      progress?.(`compact: routes of ${day} not merged: ${error.message}`);
      writer.abort();
      return null;
    }
    const params = {
      trip_date: day,
      versions: listValue(versions),
      app_ids: listValue(trips.map(([app]) => app)),
      trip_ids: listValue(trips.map(([, trip]) => trip)),
    };
    // a source the index does not know may hold anyone: the merged file is known for its trips'
    // drivers, so every trip it holds must have one
    const unknown = await queryFile(conn, 'ops/compact/routes_unknown', { trip_date: day, versions: params.versions });
    if (unknown.length > 0) {
      const [untracked] = await queryFile(conn, 'ops/compact/routes_untracked', {
        app_ids: params.app_ids,
        trip_ids: params.trip_ids,
      });
      if (Number(untracked?.['n'] ?? 0) > 0) {
        progress?.(
          `compact: routes of ${day} not merged: a file the purge's index does not know lists a trip of no driver`,
        );
        writer.abort();
        return null;
      }
    }
    // a source that is a merged file stands for the versions of its span too
    const spans = await queryFile(conn, 'ops/compact/routes_spans', { oldest: day });
    const first = spans
      .filter((s) => String(s['trip_date']) === day && versions.includes(Number(s['version'])))
      .reduce((min, s) => Math.min(min, Number(s['first_version'])), versions[0] as number);
    await inTransaction(conn, () =>
      runScript(conn, 'ops/compact/routes_index_merged', { ...params, version: newest, first_version: first }),
    );
    writer.finish(target);
  } catch (error) {
    writer.abort();
    throw error;
  }
  const dir = join(routesDir, `trip_date=${day}`);
  fsyncDir(dir);
  const removed = versions.slice(0, -1);
  for (const v of removed) rmSync(routeFile(routesDir, day, v), { force: true });
  fsyncDir(dir);
  const rel = (v: number) => relative(dirname(routesDir), routeFile(routesDir, day, v));
  await inTransaction(conn, () =>
    runScript(conn, 'ops/compact/routes_forget', {
      trip_date: day,
      versions: listValue(removed),
      paths: listValue(versions.map(rel)),
      path: rel(newest),
      identity: fileIdentity(target),
    }),
  );
  return statSync(target).size;
}

/** The trip dates with a route folder, oldest first. */
function listDates(routesDir: string): string[] {
  if (!existsSync(routesDir)) return [];
  return readdirSync(routesDir)
    .map((name) => /^trip_date=(\d{4}-\d{2}-\d{2})$/.exec(name)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort();
}

/** A date's route files of versions up to `servedVersion`, oldest first, with their sizes; leftovers of a killed merge removed. */
function routeFilesOf(dir: string, servedVersion: number): RouteFileSize[] {
  const files: RouteFileSize[] = [];
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.merge.tmp')) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    const version = ROUTE_NAME.exec(name)?.[1];
    if (version === undefined || Number(version) > servedVersion) continue;
    try {
      files.push({ version: Number(version), bytes: statSync(join(dir, name)).size });
    } catch {
      // removed meanwhile (retention)
    }
  }
  return files.sort((a, b) => a.version - b.version);
}
