import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listValue } from '../db/duckdb.js';
import { queryFile, runScript, sqlText } from '../db/sql.js';
import { fsyncDir, fsyncFile } from '../fsutil.js';
import { POINTS_PARQUET } from '../load/points-parquet.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { MERGED_POINTS, UNMERGED_POINTS } from '../warehouse/merged-points.js';
import { routeFilesToMerge } from './route-groups.js';
import { copyTo } from '../db/statements.js';

export interface PointsCompaction {
  /** Merges done (one a trip date's run of files). */
  merges: number;
  /** Source files removed once their merged file was in place. */
  removed: number;
  bytesRead: number;
  bytesWritten: number;
  /** Whether a date still has files to merge (the merges stopped at `maxMerges`). */
  pending: boolean;
}

interface PointsFile {
  name: string;
  bytes: number;
  /** The loaded file's key (an unmerged file's, from its name and the ledger); null for a merged file. */
  key: string | null;
}

/**
 * Merges each trip date's raw-points files into few (`m<n>.parquet`), at most `maxMerges` merges a
 * call; which files, as the route files' merge decides (src/compact/route-groups.ts: a settled date
 * into one file, today's and yesterday's size-tiered). A merged file's rows carry their loaded
 * file's key (`source_key`), sorted by it, so a reader that asked for the points of key K by file
 * name (src/warehouse/merged-points.ts) takes K's rows of the merged files that hold them live
 * (`points_merged`). Only files of loaded files in the ledger are merged: a load in flight may
 * still remove its own.
 *
 * Crash-safe at every point: the merged file is written under a temp name and fsynced; one
 * transaction enters it in `points_merged` (the purge's index for it too) and lists its sources
 * in `points_merge_garbage`; it is renamed into place; the sources are removed and forgotten.
 * Killed before the transaction, the temp file is removed on the next call; after it but before
 * the rename, the merge is undone (its rows go); after the rename, the sources are removed. In
 * between, a loaded file's points may be read twice (the same rows: the route writer and a
 * re-derive keep one of each), never missed.
 */
export async function compactPoints(
  conn: DuckDBConnection,
  pointsDir: string,
  options: { oldest: string; settledBefore: string; maxMerges: number; progress?: (m: string) => void },
): Promise<PointsCompaction> {
  const out: PointsCompaction = { merges: 0, removed: 0, bytesRead: 0, bytesWritten: 0, pending: false };
  await runScript(conn, 'ops/compact/points_retention', { oldest: options.oldest });
  for (const day of listDates(pointsDir)) {
    if (day < options.oldest) continue;
    const dir = join(pointsDir, `trip_date=${day}`);
    await finishMerges(conn, dir, day);
    const files = await filesOf(conn, dir, day);
    const chosen = routeFilesToMerge(
      files.map((f, i) => ({ version: i, bytes: f.bytes })),
      day < options.settledBefore,
    ).map((i) => files[i] as PointsFile);
    if (chosen.length === 0) continue;
    if (out.merges >= options.maxMerges) {
      out.pending = true;
      break;
    }
    const written = await mergeRun(conn, dir, day, chosen, files);
    if (written === null) continue;
    out.bytesWritten += written;
    await finishMerges(conn, dir, day);
    out.merges++;
    out.removed += chosen.length;
    out.bytesRead += chosen.reduce((sum, f) => sum + f.bytes, 0);
  }
  return out;
}

/** One date's run of files merged into a new `m<n>.parquet`; its bytes, or null when it holds no live row (left as it is). */
async function mergeRun(
  conn: DuckDBConnection,
  dir: string,
  day: string,
  sources_: PointsFile[],
  all: PointsFile[],
): Promise<number | null> {
  const taken = new Set(all.map((f) => f.name));
  const merged = await queryFile(conn, 'ops/compact/points_merged_of', { trip_date: day });
  for (const row of merged) taken.add(String(row['name']));
  let n = 1;
  for (const name of taken) n = Math.max(n, Number(MERGED_POINTS.exec(name)?.[1] ?? 0) + 1);
  const name = `m${n}.parquet`;
  const target = join(dir, name);
  const tmp = `${target}.merge.tmp`;
  const sources = sources_.map((f) => join(dir, f.name));
  const sourceNames = new Set(sources_.map((f) => f.name));
  const keys = new Set(sources_.flatMap((f) => (f.key === null ? [] : [f.key])));
  for (const row of merged)
    if (sourceNames.has(String(row['name'])) && row['live'] === true) keys.add(String(row['source_key']));
  // merged files whose every row a re-derive superseded: the purge and retention see to them
  if (keys.size === 0) return null;
  const params = { files: listValue(sources), keys: listValue(sources_.map((f) => f.key ?? '')), trip_date: day };
  // files the load wrote have no source_key column: read as their names say until a merged one is among them
  const select = sources_.some((f) => f.key === null) ? 'ops/compact/points_merge' : 'ops/compact/points_merge_new';
  await copyTo(conn, { query: sqlText(select) }, tmp, POINTS_PARQUET, params);
  fsyncFile(tmp);
  await inTransaction(conn, () =>
    runScript(conn, 'ops/compact/points_index_merged', {
      trip_date: day,
      name,
      keys: listValue([...keys].sort()),
      sources: listValue([...sourceNames]),
    }),
  );
  renameSync(tmp, target);
  fsyncDir(dir);
  return statSync(target).size;
}

/**
 * The merges of a date committed in the warehouse and not finished: a merged file in place has
 * its sources removed and forgotten; one that never reached its place (killed before the rename)
 * is undone. Temp files of killed merges go.
 */
async function finishMerges(conn: DuckDBConnection, dir: string, day: string): Promise<void> {
  const pending = new Map<string, string[]>();
  for (const row of await queryFile(conn, 'ops/compact/points_garbage', { trip_date: day }))
    pending.set(String(row['name']), [...(pending.get(String(row['name'])) ?? []), String(row['source'])]);
  for (const [name, sources] of pending) {
    if (existsSync(join(dir, name))) {
      for (const source of sources) rmSync(join(dir, source), { force: true });
      fsyncDir(dir);
      await runScript(conn, 'ops/compact/points_forget', { trip_date: day, name });
    } else await runScript(conn, 'ops/compact/points_undo', { trip_date: day, name });
  }
  for (const file of safeList(dir)) if (file.endsWith('.merge.tmp')) rmSync(join(dir, file), { force: true });
}

/**
 * A date's files a merge may take, oldest first: the merged files the index knows (by number),
 * then the unmerged files of loaded files in the ledger (by time written).
 */
async function filesOf(conn: DuckDBConnection, dir: string, day: string): Promise<PointsFile[]> {
  const names = safeList(dir);
  const known = new Set(
    (await queryFile(conn, 'ops/compact/points_merged_of', { trip_date: day })).map((r) => String(r['name'])),
  );
  const prefixes = [
    ...new Set(
      names.flatMap((n) => {
        const prefix = n.endsWith('.parquet') ? UNMERGED_POINTS.exec(n)?.[1] : undefined;
        return prefix === undefined ? [] : [prefix];
      }),
    ),
  ];
  const committed = new Map<string, string>();
  if (prefixes.length > 0)
    // two loaded files sharing 16 hex digits cannot be told apart by name: left as they are
    for (const row of await queryFile(conn, 'ops/compact/points_committed', { prefixes: listValue(prefixes) }))
      if (Number(row['n']) === 1) committed.set(String(row['prefix']), String(row['file_key']));
  const merged: (PointsFile & { n: number })[] = [];
  const unmerged: (PointsFile & { mtime: number })[] = [];
  for (const name of names) {
    const stat = statOf(join(dir, name));
    if (stat === null) continue;
    const m = MERGED_POINTS.exec(name);
    if (m && known.has(name)) merged.push({ name, bytes: stat.size, key: null, n: Number(m[1]) });
    const key = UNMERGED_POINTS.exec(name)?.[1];
    if (key !== undefined && name.endsWith('.parquet') && committed.has(key))
      unmerged.push({ name, bytes: stat.size, key: committed.get(key) as string, mtime: stat.mtimeMs });
  }
  merged.sort((a, b) => a.n - b.n);
  unmerged.sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : 1));
  return [...merged, ...unmerged].map(({ name, bytes, key }) => ({ name, bytes, key }));
}

/** The trip dates with a points folder, oldest first. */
function listDates(pointsDir: string): string[] {
  return safeList(pointsDir)
    .map((name) => /^trip_date=(\d{4}-\d{2}-\d{2})$/.exec(name)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort();
}

function statOf(path: string): { size: number; mtimeMs: number } | null {
  try {
    const s = statSync(path);
    return s.isFile() ? s : null;
  } catch {
    return null;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
