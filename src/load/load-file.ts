import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, nextBatchId, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { materialize, query, quoteLiteral, run, runScript, sqlText } from '../db/sql.js';
import { dropStaged, stageFile } from './stage-file.js';
import { fileKey } from './file-key.js';
import { emptyFileReport, type FileReport } from './report.js';

export interface LoadFileContext {
  pointsDir: string;
  now: Date;
}

/**
 * Loads one NDJSON or Parquet file: stage, validate, derive, keep its points as Parquet, then merge
 * it into the warehouse in ONE transaction together with its ledger row, so a load killed at any
 * point either has all of the file or none of it, and the file is simply loaded again.
 */
export async function loadFile(wh: Warehouse, path: string, ctx: LoadFileContext): Promise<FileReport> {
  const source = resolve(path);
  const key = await fileKey(source);
  const seen = await query(wh.conn, 'select batch_id from loaded_files where file_key = $key', { key });
  if (seen.length > 0) return emptyFileReport(source, true);

  const conn = wh.conn;
  try {
    return await stageAndMerge(wh, source, key, ctx);
  } finally {
    await dropStaged(conn);
  }
}

async function stageAndMerge(wh: Warehouse, source: string, key: string, ctx: LoadFileContext): Promise<FileReport> {
  const conn = wh.conn;
  await stageFile(conn, source);
  const version = (await warehouseVersion(conn)) + 1;
  const batchId = await nextBatchId(conn);
  const loadedAt = ctx.now.toISOString();
  const params = { version, batch_id: batchId, source_file: source, loaded_at: loadedAt, file_key: key };
  await materialize(conn, 'intermediate/int_trips', params);

  // Points go to Parquet before the transaction under a name derived from the file's hash, so a
  // retry after a crash overwrites the same files instead of adding copies.
  await run(
    conn,
    `copy (${sqlText('load/write_points')}) to ${quoteLiteral(ctx.pointsDir)} ` +
      `(format parquet, compression zstd, partition_by (trip_date), overwrite_or_ignore true, ` +
      `filename_pattern ${quoteLiteral(`f${key.slice(0, 16)}_{i}`)})`,
  );

  const report = emptyFileReport(source, false);
  report.version = version;
  await inTransaction(conn, async () => {
    await runScript(conn, 'load/merge_file', params);
    await run(conn, `insert into stats_daily by name\n${sqlText('marts/stats_daily')}`, params);
    for (const row of await query(conn, sqlText('load/file_report'))) {
      const section = row['section'] as 'records' | 'points' | 'events' | 'status' | 'replaced';
      const n = Number(row['n']);
      if (section === 'replaced') report.replaced = n;
      else report[section][String(row['reason'])] = n;
    }
    await run(conn, 'insert into loaded_files values ($key, $path, $bytes, $batch_id, $loaded_at)', {
      key, path: source, bytes: statSync(source).size, batch_id: batchId, loaded_at: loadedAt,
    });
    await run(conn, 'insert into batches values ($batch_id, $kind, $path, $version, $started, now(), $report::json)', {
      batch_id: batchId, kind: 'load', path: source, version, started: loadedAt, report: JSON.stringify(report),
    });
    await setWarehouseVersion(conn, version);
  });
  return report;
}
