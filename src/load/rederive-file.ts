import { readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { inTransaction, nextBatchId, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { materialize, queryFile, quoteLiteral, runFile, runScript, sqlText } from '../db/sql.js';
import { dropStaged, formatOf, stageFile } from './stage-file.js';
import { scanFile } from './scan-file.js';
import { mergeStaged } from './merge-staged.js';
import { settleResends } from './resends.js';
import { emptyFileReport, type FileReport } from './report.js';
import { POINTS_PARQUET } from './points-parquet.js';
import { indexFileDrivers } from './file-drivers.js';
import { keptPointsOf, mergedPointsOfKey, supersedeMergedPoints } from '../warehouse/merged-points.js';
import { copyTo, dropTemp } from '../db/statements.js';

export interface RederivedFile {
  file: string;
  /** The trips whose stored derivation the file's current one replaced, or that it added. */
  rederived: number;
  /** Of those, the ones whose status, reason, mileage, points or top speed changed. */
  changed: number;
  /** Trips of the file that a later file sent again: they keep that file's copy. */
  heldElsewhere: number;
  /** Trips of the file whose record the current rules reject: kept as stored, by reason. */
  keptAsStored: Record<string, number>;
  report: FileReport;
}

/**
 * Validates and derives one loaded file again by the current rules and merges the result in ONE
 * transaction with the file's ledger row, like a load: a run killed at any point has all of the
 * file's new derivation or none of it, and running again repeats it with the same outcome.
 */
export async function rederiveFile(
  conn: DuckDBConnection,
  file: string,
  loaded: { file_key: string; batch_id: number },
  /** `named`: the file its records name, when `file` is a slice cut again from it (src/load/slice-rederive.ts). */
  ctx: { pointsDir: string; now: Date; landingDir?: string; named?: string; archive?: { day: string; name: string } },
): Promise<RederivedFile> {
  const key = loaded.file_key;
  const named = ctx.named ?? file;
  try {
    const { lines } = await scanFile(file, formatOf(file) === 'ndjson');
    const how = await stageFile(conn, file, lines, ctx.now);
    await materialize(conn, 'models/intermediate/int_trips', {
      source_file: named,
      loaded_at: ctx.now.toISOString(),
      file_key: key,
    });
    await settleResends(conn, file, key, lines, how);
    await runScript(conn, 'ops/load/rederive_restrict', { file_key: key });
    const [counts] = await queryFile(conn, 'ops/load/rederive_changes');
    const elsewhere = await queryFile(conn, 'ops/load/rederive_elsewhere_count');
    const keptAsStored: Record<string, number> = {};
    for (const row of await queryFile(conn, 'ops/load/rederive_kept_reasons')) {
      keptAsStored[String(row['reason'])] = Number(row['n']);
    }
    await writePoints(conn, ctx.pointsDir, key);
    // a slice cut again is no archive of its own: the index leaves its file unknown, opened by a purge
    const report = await merge(
      conn,
      named,
      key,
      loaded.batch_id,
      ctx.now,
      ctx.archive ?? archivedAs(file, ctx.landingDir),
    );
    return {
      file: named,
      rederived: Object.values(report.status).reduce((a, b) => a + b, 0),
      changed: Number(counts?.['changed'] ?? 0),
      heldElsewhere: Number(elsewhere[0]?.['n'] ?? 0),
      keptAsStored,
      report,
    };
  } finally {
    await dropStaged(conn).catch(() => undefined);
    await dropTemp(conn, 'rederive_elsewhere');
    await dropTemp(conn, 'rederive_kept_as_stored');
    await dropTemp(conn, 'rederive_kept_point_rows');
  }
}

/**
 * Replaces the file's raw points (a trip whose points changed must not keep its old ones beside
 * the new): the points of trips kept as stored are copied out of the earlier Parquet files, the
 * trips the file holds are written as a load does, and only then are the earlier files deleted,
 * all under new names. A run that fails or is killed in between leaves the earlier files (and
 * perhaps some new ones, which the next run takes as earlier ones, reading kept rows once).
 */
async function writePoints(conn: DuckDBConnection, pointsDir: string, key: string): Promise<void> {
  const prefix = `f${key.slice(0, 16)}_`;
  const earlier = safeList(pointsDir).flatMap((partition) =>
    safeList(join(pointsDir, partition))
      .filter((name) => name.startsWith(prefix) && name.endsWith('.parquet'))
      .map((name) => join(pointsDir, partition, name)),
  );
  let stamp = Date.now();
  while (earlier.some((path) => path.includes(`${prefix}r${stamp}_`))) stamp += 1;
  // merged files hold the file's rows beside others': those are superseded, not removed
  const earlierMerged = (await mergedPointsOfKey(conn, pointsDir, key)).map((m) => m.path);
  const [kept] = await queryFile(conn, 'ops/load/rederive_kept_count');
  for (const partition of safeList(pointsDir)) {
    const dir = join(pointsDir, partition);
    const old = earlier.filter((path) => path.startsWith(`${dir}/`));
    const oldMerged = earlierMerged.filter((path) => path.startsWith(`${dir}/`));
    if (Number(kept?.['n'] ?? 0) === 0 || old.length + oldMerged.length === 0) continue;
    await keptPointsOf(conn, old, oldMerged, key);
    const [rows] = await queryFile(conn, 'ops/load/rederive_kept_point_count');
    if (Number(rows?.['n'] ?? 0) === 0) continue;
    const tmp = join(dir, `.${prefix}kept.tmp`);
    await copyTo(conn, { table: 'rederive_kept_point_rows' }, tmp, POINTS_PARQUET);
    renameSync(tmp, join(dir, `${prefix}r${stamp}_kept.parquet`));
  }
  await copyTo(
    conn,
    { query: sqlText('ops/load/write_points') },
    pointsDir,
    `${POINTS_PARQUET}, partition_by (trip_date), overwrite_or_ignore true, ` +
      `filename_pattern ${quoteLiteral(`${prefix}r${stamp}_{i}`)}`,
  );
  for (const path of earlier) rmSync(path, { force: true });
  await supersedeMergedPoints(conn, key);
}

/** The landing archive's day folder and name of `file`, if it is one (`<landing>/loaded/<day>/<name>`). */
function archivedAs(file: string, landingDir: string | undefined): { day: string; name: string } | null {
  const day = basename(dirname(file));
  if (landingDir === undefined || dirname(dirname(file)) !== join(landingDir, 'loaded')) return null;
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? { day, name: basename(file) } : null;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function merge(
  conn: DuckDBConnection,
  file: string,
  key: string,
  previousBatchId: number,
  now: Date,
  archive: { day: string; name: string } | null,
): Promise<FileReport> {
  const version = (await warehouseVersion(conn)) + 1;
  const batchId = await nextBatchId(conn);
  const loadedAt = now.toISOString();
  const params = {
    version,
    batch_id: batchId,
    source_file: file,
    loaded_at: loadedAt,
    staged_after: batchId - 1,
    previous_batch_id: previousBatchId,
  };
  const report = emptyFileReport(file, false);
  report.version = version;
  await inTransaction(conn, async () => {
    await runScript(conn, 'ops/load/rederive_forget', params);
    await mergeStaged(conn, params, report);
    // the file's rows (quarantine, point drops) now belong to this batch: the next re-derivation replaces them
    await runFile(conn, 'ops/load/rederive_ledger', { batch_id: batchId, key });
    await runFile(conn, 'ops/load/batch_record', {
      batch_id: batchId,
      kind: 'rederive',
      path: file,
      version,
      started: loadedAt,
      report: JSON.stringify(report),
    });
    // its points files may hold new trip dates now; an archive loaded before the index is known from here on
    await indexFileDrivers(conn, key, archive);
    await setWarehouseVersion(conn, version);
  });
  return report;
}
