import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathsFor } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { DatabaseBusyError, openDatabase } from '../db/open.js';
import type { Progress } from '../progress.js';
import { copyOne, copyTree } from './files.js';

/** The warehouse's DuckDB file in a backup, relative to the data folder (and the backup). */
export const WAREHOUSE_FILE = 'warehouse/warehouse.duckdb';

/**
 * Copies the warehouse (its DuckDB file, that file's WAL, and the raw points) while holding it
 * open read-only: DuckDB lets no process open a file for writing while another holds it, so no
 * load, score or purge writes any of it during the copy, and the copy is the state one job left
 * it in (a DuckDB file copied while a writer holds it can be torn). A job holding it is waited
 * for, up to DRIVING_WAREHOUSE_LOCK_WAIT_MS (60 s) and said at once; then the backup fails
 * (exit 3) naming the job. A job that starts meanwhile waits for the copy the same way, so the
 * copy is kept short: files only, cloned where the file system shares blocks. Returns the paths
 * copied (none before the first load made a warehouse).
 */
export async function copyWarehouse(
  dataDir: string,
  to: string,
  progress: Progress,
  lockWaitMs = jobSettings().warehouseLockWaitMs,
): Promise<string[]> {
  const paths = pathsFor(dataDir);
  if (!existsSync(paths.warehouseFile)) return [];
  const db = await openDatabase(paths.warehouseFile, {
    readOnly: true,
    lockWaitMs,
    threads: 1,
    memoryLimit: '256MB',
    onWait: (m) => progress(`backup: warehouse: ${m}`),
  }).catch((error: unknown) => {
    if (error instanceof DatabaseBusyError) {
      throw new DatabaseBusyError(
        error.path,
        error.detail,
        'the backup copies the warehouse only while no job writes it: run it again when that job has finished (or give it longer: DRIVING_WAREHOUSE_LOCK_WAIT_MS)',
      );
    }
    throw error;
  });
  try {
    const copied: string[] = [];
    for (const file of [paths.warehouseFile, `${paths.warehouseFile}.wal`]) {
      const rel = relative(dataDir, file);
      if (existsSync(file) && copyOne(file, join(to, rel))) copied.push(rel);
    }
    copied.push(...copyTree(dataDir, to, relative(dataDir, paths.pointsDir)));
    return copied;
  } finally {
    db.close();
  }
}
