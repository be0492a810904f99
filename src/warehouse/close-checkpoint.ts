import { statSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { runFile } from '../db/sql.js';

/**
 * A write-ahead log at most this long is left for the next open to replay rather than
 * checkpointed when the warehouse closes. A tiny load (one file of a few trips) leaves a small log;
 * checkpointing it costs more CPU than the next open's replay, and the next load's first commit
 * costs more on tables a checkpoint rewrote than on tables still in the log. A larger log is still
 * checkpointed at close, as after any bulk load; DuckDB itself checkpoints at a commit once the
 * log passes 16 MB.
 */
export const SMALL_WAL_BYTES = 4 * 2 ** 20;

/** The size of the warehouse file's write-ahead log (0: none). */
export function walBytes(warehouseFile: string): number {
  try {
    return statSync(`${warehouseFile}.wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Leaves a small write-ahead log for the next open instead of checkpointing it at close. Called
 * last, once nothing more is written; returns whether the checkpoint was left out. The log is
 * synced at each commit, so a kill after this point loses nothing either way.
 */
export async function skipSmallCloseCheckpoint(conn: DuckDBConnection, warehouseFile: string): Promise<boolean> {
  if (walBytes(warehouseFile) > SMALL_WAL_BYTES) return false;
  await leaveCloseCheckpoint(conn);
  return true;
}

/** The warehouse's writes stay in its write-ahead log at close, for the next open to replay. */
export async function leaveCloseCheckpoint(conn: DuckDBConnection): Promise<void> {
  await runFile(conn, 'ops/warehouse/close_checkpoint_off');
}
