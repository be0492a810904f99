import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { queryFile, runFile } from '../db/sql.js';
import type { UploadBatches, UploadLedger } from '../load/uploads.js';

// The load's side of SDK upload batching (src/load/uploads.ts): what the warehouse records of
// uploads, and what the report keeps of a batching.

/** What the batching did, for the report (the names it listed are not news). */
export function withoutListing({ listed: _, ...batches }: UploadBatches): Omit<UploadBatches, 'listed'> {
  return batches;
}

/** The warehouse's record of SDK uploads, for batching them (src/load/uploads.ts). */
export function uploadLedger(conn: DuckDBConnection, now: Date): UploadLedger {
  return {
    known: async (keys) =>
      new Set(
        (await queryFile(conn, 'ops/load/uploads_known', { keys: listValue(keys) })).map((r) => String(r['key'])),
      ),
    record: async (batchKey, uploadKeys) => {
      await runFile(conn, 'ops/load/record_uploads', {
        keys: listValue(uploadKeys),
        batch_key: batchKey,
        at: now.toISOString(),
      });
    },
    batchLoaded: async (name) => (await queryFile(conn, 'ops/load/batch_loaded', { name })).length > 0,
  };
}
