import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { DuckDBInstance, listValue } from '../db/duckdb.js';
import { queryFile, runFile } from '../db/sql.js';
import { copyTo } from '../db/statements.js';
import { fsyncFile, moveIntoPlace, temporaryBeside } from '../fsutil.js';
import type { CellDirectory } from './directory.js';
import type { Forwarder, SplitResult } from './split-types.js';

/**
 * The split by cell of a partner Parquet file (src/cells/split.ts does NDJSON): the same rule,
 * read with DuckDB. Each other cell's records go as one Parquet piece; the file is rewritten with
 * this cell's records and those that name no driver. A file DuckDB cannot read as the record
 * format is left as it is, for the load to set aside with its reason. Whether some of it stays.
 */
export async function splitParquet(
  path: string,
  id: { size: number; mtimeMs: number },
  cell: string,
  cells: CellDirectory,
  forward: Forwarder,
  now: Date,
  out: SplitResult,
): Promise<boolean> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await instance.connect();
  try {
    let drivers: Record<string, unknown>[];
    try {
      drivers = await queryFile(conn, 'ops/cells/split_parquet_drivers', { source: path });
    } catch {
      return true;
    }
    const byApp = new Map<string, number[]>();
    for (const d of drivers) {
      const app = String(d['app_id']);
      byApp.set(app, [...(byApp.get(app) ?? []), Number(d['user_id'])]);
    }
    const rows: { app: string; user: number; cell: string }[] = [];
    for (const [app, users] of byApp)
      for (const [user, c] of await cells.assign(app, users, now)) rows.push({ app, user, cell: c });
    const targets = [...new Set(rows.map((r) => r.cell))].filter((c) => c !== cell).sort();
    if (targets.length === 0) return true;
    await runFile(conn, 'ops/cells/split_parquet_cells_table');
    await runFile(conn, 'ops/cells/split_parquet_cells_insert', {
      app_ids: listValue(rows.map((r) => r.app)),
      user_ids: listValue(rows.map((r) => r.user)),
      cells: listValue(rows.map((r) => r.cell)),
    });
    const stem = basename(path).replace(/\.parquet$/, '');
    const tag = createHash('sha256')
      .update(`${basename(path)}\u0000${id.size}\u0000${id.mtimeMs}`)
      .digest('hex')
      .slice(0, 12);
    for (const target of targets) {
      const piece = await rowsTo(conn, path, target, false);
      try {
        const name = `${stem}.from-${cell}-${tag}-${target}-0001.parquet`;
        const app = rows.find((r) => r.cell === target)?.app ?? '';
        await forward.put(name, app, now, readFileSync(piece.file), target);
        out.forwarded += piece.rows;
        out.pieces++;
      } finally {
        rmSync(piece.file, { force: true });
      }
    }
    out.split++;
    const own = await rowsTo(conn, path, cell, true);
    if (own.rows === 0) {
      rmSync(own.file, { force: true });
      rmSync(path, { force: true });
      return false;
    }
    fsyncFile(own.file);
    moveIntoPlace(own.file, path);
    return true;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** The records of `cell` (and, with `keepUnknown`, those naming no driver) as a Parquet file beside the source. */
async function rowsTo(
  conn: Awaited<ReturnType<DuckDBInstance['connect']>>,
  path: string,
  cell: string,
  keepUnknown: boolean,
): Promise<{ file: string; rows: number }> {
  await runFile(conn, 'ops/cells/split_parquet_rows', { source: path, cell, keep_unknown: keepUnknown });
  const [count] = await queryFile(conn, 'ops/cells/split_rows_count');
  const file = temporaryBeside(path);
  await copyTo(conn, { table: 'split_rows' }, file, 'format parquet, compression zstd');
  return { file, rows: Number(count?.['n'] ?? 0) };
}
