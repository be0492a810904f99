import { pathsFor, jobSettings } from '../config.js';
import { appsOf } from './data-dir.js';
import { openWarehouse } from '../warehouse/warehouse.js';
import { loadFiles } from '../load/load-file.js';
import { expandInputs, landingFiles, moveLanded, type RefusedInput } from '../load/landing.js';
import { batchUploads, type UploadBatches, type UploadLedger } from '../load/uploads.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '../db/duckdb.js';
import { queryFile, runFile } from '../db/sql.js';
import { ChangedDuringLoadError } from '../load/file-identity.js';
import { pruneLandingArchive, prunePoints } from '../load/retention.js';
import { emptyFileReport, totals, type FileReport, type LoadTotals } from '../load/report.js';
import { routeOptions } from '../publish/routes.js';
import { publish, type PublishResult } from '../publish/publish.js';
import { purgeDeletedUsers, type PurgeResult } from '../purge/purge.js';
import { emitEvents, type EmitResult } from '../events/emit.js';
import { silent, type Progress } from '../progress.js';
import { addDays, todayIn } from '../time.js';
import { firstLine } from '../errors.js';

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
  /** Called between a file's staging and its merge (tests change the file there). */
  afterStage?: (file: string) => void | Promise<void>;
}

export interface LoadResult {
  files: FileReport[];
  /** Entries of the landing area or `--input` that are not regular files: never read, left where they are. */
  refused: RefusedInput[];
  /** SDK upload files put together into batch files before the landing area was listed. */
  uploadBatches: UploadBatches | null;
  /** Whether an input named with `--input` was refused (bad input: exit 2). */
  refusedNamed: boolean;
  totals: LoadTotals;
  publish: PublishResult;
  pointsPartitionsRemoved: string[];
  purged: PurgeResult;
  events: EmitResult;
  seconds: number;
}

/**
 * The load job: every input file (default: what is new in the landing area) is validated, derived
 * and merged in its own transaction; then old raw points are pruned and the result is published.
 * Publishing runs even when no file was new, which repairs a publish an earlier run did not finish.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const started = Date.now();
  const now = options.now ?? new Date();
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const apps = await appsOf(options.dataDir);
  const fromLanding = options.inputs === undefined || options.inputs.length === 0;

  const wh = await openWarehouse(paths.warehouseFile, apps, { memoryLimit: settings.memoryLimit });
  try {
    // with the warehouse held, so that no other load batches the same uploads
    const batched = fromLanding ? await batchUploads(paths.landingDir, options.uploadBatchBytes ?? settings.uploadBatchBytes, uploadLedger(wh.conn, now)) : null;
    if (batched && batched.files.length > 0) {
      const copies = batched.duplicates > 0 ? ` (${batched.duplicates} byte-identical to an earlier upload or a loaded file, left out)` : '';
      progress(`load: ${batched.uploads} SDK upload file(s) put together into ${batched.files.length} batch file(s), ${(batched.bytes / 2 ** 20).toFixed(1)} MiB${copies}`);
    }
    if (batched?.error) progress(`load: SDK uploads not all batched (${batched.error}): the rest load as files of their own`);
    const { files, refused } = fromLanding ? landingFiles(paths.landingDir) : expandInputs(options.inputs ?? []);
    progress(`load: ${files.length} file(s) ${fromLanding ? `from ${paths.landingDir}` : 'given'}`);
    for (const r of refused) progress(`load: ${r.file}: not loaded, not a regular file (${r.kind}): never followed, left where it is`);
    const reports: FileReport[] = [];
    const day = now.toISOString().slice(0, 10);
    let t0 = Date.now();
    // the same route files the load writes per file, and the publish any still missing
    const routes = routeOptions(paths, settings.pointsRetentionDays, now);
    await loadFiles(wh, files, { pointsDir: paths.pointsDir, now, parseBytes: options.parseBytes, pointsPerPart: options.pointsPerPart ?? settings.pointsPerPart, afterStage: options.afterStage, concurrency: options.concurrency ?? settings.loadConcurrency, routes }, ({ file, report: loaded, error }, index) => {
      let report: FileReport;
      if (loaded) {
        report = loaded;
        if (fromLanding) moveLanded(paths.landingDir, file, day, 'loaded');
      } else if (error instanceof ChangedDuringLoadError) {
        // nothing of it was kept, and it stays where it is: the next run takes it again
        report = { ...emptyFileReport(file, false), failed: firstLine(error), retry: true };
      } else {
        // One unreadable file must not hold up the others: it is set aside with its reason.
        report = { ...emptyFileReport(file, false), failed: firstLine(error) };
        if (fromLanding) moveLanded(paths.landingDir, file, day, 'failed', report.failed);
      }
      reports.push(report);
      const summary = report.failed ? `FAILED: ${report.failed}` : report.skipped ? 'already loaded, skipped'
        : `${describe(report)}${report.routesDeferred ? `; route files left to the publish: ${report.routesDeferred}` : ''}`;
      // files are derived two at a time but finish in order: the time is since the previous one finished
      progress(`load: [${index + 1}/${files.length}] ${file}: ${summary} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      t0 = Date.now();
    });
    const today = todayIn('UTC', now);
    const removed = prunePoints(paths.pointsDir, settings.pointsRetentionDays, today);
    // the routes the API serves go with the raw points they were copied from (same days)
    prunePoints(paths.routesDir, settings.pointsRetentionDays, today);
    if (removed.length > 0) progress(`load: pruned raw points of ${removed.length} day(s) older than ${settings.pointsRetentionDays} days`);
    const archived = pruneLandingArchive(paths.landingDir, settings.pointsRetentionDays, today);
    // the uploads of batch files gone with the archive are forgotten with them: the same cut, the
    // start of the oldest (UTC) day the archive keeps, so neither outlives the other
    await runFile(wh.conn, 'load/prune_loaded_uploads', { oldest: `${addDays(today, -settings.pointsRetentionDays)}T00:00:00Z` });
    if (archived.length > 0) progress(`load: pruned ${archived.length} landing archive folder(s)`);
    const purged = await purgeDeletedUsers(wh, paths, now);
    if (purged.users > 0) progress(`load: purged ${purged.users} deleted account(s): ${purged.trips} trips, ${purged.pointFilesRewritten} points file(s) rewritten`);
    progress('load: publishing');
    const published = await publish(wh, {
      publishedDir: paths.publishedDir,
      manifestFile: paths.manifestFile,
      lockWaitMs: settings.publishLockWaitMs,
      now,
      progress: (m) => progress(`load: ${m}`),
      routes,
    });
    progress(`load: publish ${published.detail}`);
    const events = await emitEvents(wh, paths.eventsDir, published.version, now);
    if (events.file) progress(`load: ${events.tripCreated} trip.created, ${events.tripUpdated} trip.updated, ${events.safetyScoreUpdated} safety_score.updated and ${events.userDeleted} user.deleted event(s) in ${events.file}`);
    return { files: reports, uploadBatches: batched, refused, refusedNamed: !fromLanding && refused.length > 0, totals: totals(reports), publish: published, pointsPartitionsRemoved: removed, purged, events, seconds: (Date.now() - started) / 1000 };
  } finally {
    wh.close();
  }
}

/** The warehouse's record of SDK uploads, for batching them (src/load/uploads.ts). */
function uploadLedger(conn: DuckDBConnection, now: Date): UploadLedger {
  return {
    known: async (keys) => new Set((await queryFile(conn, 'load/uploads_known', { keys: listValue(keys) })).map((r) => String(r['key']))),
    record: async (batchKey, uploadKeys) => {
      await runFile(conn, 'load/record_uploads', { keys: listValue(uploadKeys), batch_key: batchKey, at: now.toISOString() });
    },
    batchLoaded: async (name) => (await queryFile(conn, 'load/batch_loaded', { name })).length > 0,
  };
}

function describe(report: FileReport): string {
  const t = totals([report]);
  const rejected = Object.values(t.rejected).reduce((a, b) => a + b, 0);
  return `${t.tripsLoaded} trips (${t.tripsReplaced} replaced), ${rejected} rejected, ${t.pointsKept}/${t.pointsRead} points kept`;
}
