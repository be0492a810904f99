// How long DuckDB's allocator keeps memory a query freed before it gives it back to the system,
// for a process that queries again within seconds. Imported statically by an entry point, before
// DuckDB's library is loaded: its allocator (jemalloc, on Linux) reads the variable once, at its
// first allocation. Nothing imported here loads DuckDB.
//
// The continuous load (`load.js --watch`) runs a batch, rests up to 10 s and runs the next one.
// DuckDB's own setting hands freed pages back within about a second, so every batch faulted its
// whole working memory in again, paid in CPU on both cores the API shares. Kept for a minute, a
// batch reuses what the one before freed; a plain run ends with its one batch and keeps DuckDB's
// setting. The price is memory: between batches the watch's resident size stays near its largest
// batch's for up to a minute.

import { defaultSetting } from '../settings.js';

/** What the watch gives DuckDB's allocator unless the operator set DUCKDB_JE_MALLOC_CONF (docs/configuration.md). */
export const WATCH_ALLOCATOR_CONF = 'dirty_decay_ms:60000,muzzy_decay_ms:60000';

/** Whether a job started with `args` runs batch after batch: the continuous load. */
export function runsBatchAfterBatch(args: readonly string[]): boolean {
  return args.includes('--watch');
}

if (runsBatchAfterBatch(process.argv.slice(2))) defaultSetting('DUCKDB_JE_MALLOC_CONF', WATCH_ALLOCATOR_CONF);
