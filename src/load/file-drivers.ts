import type { DuckDBConnection } from '@duckdb/node-api';
import { runScript } from '../db/sql.js';

/**
 * Inside a file's merge transaction: enters the drivers its staged records name in file_drivers
 * and indexed_files (sql/ops/load/index_file_drivers.sql), with the archive it is about to be moved to, so the
 * purge opens only the archives and raw-points files that hold a deleted driver (src/purge/index.ts).
 * In the transaction, so a file committed is never a file the index does not know.
 */
export async function indexFileDrivers(
  conn: DuckDBConnection,
  fileKey: string,
  archive: { day: string; name: string } | null,
): Promise<void> {
  await runScript(conn, 'ops/load/index_file_drivers', {
    file_key: fileKey,
    archive_day: archive?.day ?? null,
    archive_name: archive?.name ?? null,
  });
}
