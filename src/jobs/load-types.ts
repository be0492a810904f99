import type { DuckDBConnection } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/warehouse.js';
import type { RefusedInput } from '../load/landing.js';
import type { UploadBatches } from '../load/uploads.js';
import type { FileReport, LandingIntake, LoadTotals, ReasonCount } from '../load/report.js';
import type { PublishResult } from '../publish/publish.js';
import type { HeldLayers } from '../publish/held-layers.js';
import type { PurgeResult } from '../purge/purge.js';
import type { Erasure } from '../purge/erase.js';
import type { EmitResult } from '../events/emit.js';
import type { Progress } from '../progress.js';

// What a load run (src/jobs/load.ts) is asked to do and what it answers; load.ts re-exports both.

export interface LoadOptions {
  dataDir: string;
  inputs?: string[];
  now?: Date;
  progress?: Progress;
  /** Files derived at once (default DRIVING_LOAD_CONCURRENCY, 2). */
  concurrency?: number;
  /** NDJSON text parsed at once when a file is read line by line (tests make it small). */
  parseBytes?: number;
  /** Points derived at once (default DRIVING_LOAD_POINTS_PER_PART, 8,000,000; tests make it small). */
  pointsPerPart?: number;
  /** Bytes of SDK upload files put together into one batch file (default DRIVING_LOAD_UPLOAD_BATCH_BYTES, 128 MiB; 0: none). */
  uploadBatchBytes?: number;
  /** Called between a file's staging and its merge, with the connection holding its staged rows (tests change the file, or a staged row, there). */
  afterStage?: (file: string, conn: DuckDBConnection) => void | Promise<void>;
  /** How long to wait for another job holding the warehouse (default DRIVING_WAREHOUSE_LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /**
   * A warehouse the caller holds open across runs (the continuous load) and closes itself; after a
   * run whose erasure rewrote the warehouse file (`erasure.warehouse`) it must be opened anew.
   */
  warehouse?: Warehouse;
  /** DuckDB threads (default DRIVING_DUCKDB_THREADS, else one a core). */
  threads?: number;
  /**
   * After the switch, bring the slot just retired up to date too (default true), so that the score
   * run's publish copies only scores. The continuous load does not: its next batch publishes into
   * that slot within seconds anyway, and the catch-up would cost every batch a second copy.
   */
  settleRetired?: boolean;
  /**
   * Look after the route files of this load's versions and the reported ones only, not every route
   * file within retention (src/publish/route-step.ts): the continuous load's batches between its
   * full upkeeps. Default false.
   */
  routesIncremental?: boolean;
  /** Called when the publish has switched the API to the new version (the continuous load times its lag from here). */
  onPublished?: (version: number) => void;
  /** The served pack's layers kept open between publishes (the continuous load: src/publish/held-layers.ts). */
  heldLayers?: HeldLayers;
  /** Partner files in the landing area written within this long are left for a later run (the continuous load: DRIVING_LANDING_QUIET_MS; default 0). */
  quietMs?: number;
  /** A landing NDJSON file larger than this is loaded in slices (default DRIVING_LOAD_SLICE_BYTES; 0: never). */
  sliceBytes?: number;
  /** Slices of large partner files this run takes (default all: the continuous load takes one a batch). */
  maxSlices?: number;
  /** Make a large file's plan of slices beside the runs, not in one (the continuous load: src/load/slices.ts). */
  planSlicesAside?: boolean;
  /** Route merges before the publish at most (src/compact/step.ts; default all: the continuous load's batch does one). */
  compactMerges?: number;
}

export interface LoadResult {
  files: FileReport[];
  /** Entries of the landing area or `--input` that are not regular files: never read, left where they are. */
  refused: RefusedInput[];
  /** SDK upload files put together into batch files before the landing area was listed. */
  uploadBatches: Omit<UploadBatches, 'listed'> | null;
  intake: LandingIntake;
  /** Whether an input named with `--input` was refused (bad input: exit 2). */
  refusedNamed: boolean;
  totals: LoadTotals;
  /** What was set aside, by reason (records rejected, events quarantined, points dropped); the summary ends with it. */
  reasons: ReasonCount[];
  publish: PublishResult;
  pointsPartitionsRemoved: string[];
  purged: PurgeResult;
  events: EmitResult;
  erasure: Erasure;
  seconds: number;
}
