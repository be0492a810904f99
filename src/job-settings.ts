import { setting, type Env } from './settings.js';

/** Settings of the batch jobs, read from the environment (src/settings.ts) with defaults. */
export interface JobSettings {
  /** Days of raw points kept after their trip's date (decisions: only needed to derive metrics). */
  pointsRetentionDays: number;
  /** DuckDB memory limit for jobs; larger loads spill to disk instead of growing RSS. */
  memoryLimit: string;
  /** Input files derived at once by a load, each on its own DuckDB connection (merged in order). */
  loadConcurrency: number;
  /** How long a publish waits for API readers to release the standby slot. */
  publishLockWaitMs: number;
  /** How long a job waits for another job to let go of the warehouse before it exits 3. */
  warehouseLockWaitMs: number;
  /** Points a load derives at once (a file with more is derived a part at a time). */
  pointsPerPart: number;
  /** Bytes of SDK upload files a load puts together into one batch file (0: none). */
  uploadBatchBytes: number;
  /** A landing NDJSON file larger than this is loaded in slices of about this size (0: never sliced). */
  sliceBytes: number;
}

export function jobSettings(env?: Env): JobSettings {
  return {
    pointsRetentionDays: setting('DRIVING_POINTS_RETENTION_DAYS', env),
    // DuckDB fills its cache up to the limit and allocates more outside it at peaks (a large
    // serving pack build most of all), so the default leaves room for that under a job's 4 GiB
    memoryLimit: setting('DRIVING_MEMORY_LIMIT', env),
    loadConcurrency: setting('DRIVING_LOAD_CONCURRENCY', env),
    publishLockWaitMs: setting('DRIVING_PUBLISH_LOCK_WAIT_MS', env),
    warehouseLockWaitMs: setting('DRIVING_WAREHOUSE_LOCK_WAIT_MS', env),
    pointsPerPart: setting('DRIVING_LOAD_POINTS_PER_PART', env),
    uploadBatchBytes: setting('DRIVING_LOAD_UPLOAD_BATCH_BYTES', env),
    sliceBytes: setting('DRIVING_LOAD_SLICE_BYTES', env),
  };
}
