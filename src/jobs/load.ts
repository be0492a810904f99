import { pathsFor, jobSettings } from '../config.js';
import { appsOf } from './data-dir.js';
import { openWarehouse, refreshApps, type Warehouse } from '../warehouse/warehouse.js';
import { loadFiles } from '../load/load-file.js';
import { expandInputs, kindOf, landingFiles, moveLanded } from '../load/landing.js';
import { holdBackSettling } from '../load/quiet.js';
import { recordTaken, retakeChanged, type TakenFile } from '../load/retake.js';
import { splitBatch } from '../load/split-batch.js';
import { SliceRun } from '../load/slices.js';
import { batchUploads, uploadsInTurn } from '../load/uploads.js';
import { runFile } from '../db/sql.js';
import { ChangedDuringLoadError } from '../load/file-identity.js';
import { pruneLandingArchive, prunePoints } from '../load/retention.js';
import { compactArchiveStep } from '../load/archive-compact.js';
import { emptyFileReport, reasonCounts, type LandingIntake, totals, type FileReport } from '../load/report.js';
import { routeOptions } from '../warehouse/route-files.js';
import { publish } from '../publish/publish.js';
import { CheckFailedError } from '../warehouse/checks.js';
import { finishErasure, runPurge } from '../purge/step.js';
import { emitEvents, type EmitResult } from '../events/emit.js';
import { silent } from '../progress.js';
import { heartbeat } from '../heartbeat.js';
import { addDays, todayIn } from '../time.js';
import { firstLine } from '../errors.js';
import { basename } from 'node:path';
import { isMachineError } from '../machine-error.js';
import { skipSmallCloseCheckpoint } from '../warehouse/close-checkpoint.js';
import { compactQuietly } from '../compact/step.js';
import { takeInForLoad } from '../intake/from-store.js';
import { rankAcrossCells } from '../cells/rank-step.js';
import { splitForCells } from '../cells/split-step.js';
import { recordArrivals, takeInMoves } from '../cells/move-step.js';
import type { LoadOptions, LoadResult } from './load-types.js';
import { uploadLedger, withoutListing } from './load-uploads.js';

export type { LoadOptions, LoadResult } from './load-types.js';

/** The cut each open warehouse's loaded uploads were last pruned to (sql/ops/load/prune_loaded_uploads.sql). */
const prunedUploadsTo = new WeakMap<Warehouse, string>();

/**
 * The load job: every input file (default: what is new in the landing area) is validated, derived
 * and merged in its own transaction; then old raw points are pruned and the result is published.
 * Publishing runs even when no file was new, which repairs a publish an earlier run did not finish.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const started = Date.now();
  const now = options.now ?? new Date();
  // every step is named as it starts and again every 5 s while it lasts: opening a large
  // warehouse (its WAL replayed, the schema and macros installed), batching many uploads and a
  // first file on a cold cache each took seconds without a word
  const beat = heartbeat(options.progress ?? silent, { timer: options.progress !== undefined });
  const progress = beat.progress;
  const paths = pathsFor(options.dataDir);
  const settings = jobSettings();
  const apps = await appsOf(options.dataDir);
  const fromLanding = options.inputs === undefined || options.inputs.length === 0;

  const held = options.warehouse;
  let wh: Warehouse;
  try {
    if (held) {
      wh = held;
      await refreshApps(wh, apps);
    } else {
      const opening = `load: opening the warehouse ${paths.warehouseFile} (schema, macros, ${apps.length} app(s))`;
      progress(opening);
      beat.doing(opening);
      const openStarted = Date.now();
      wh = await openWarehouse(paths.warehouseFile, apps, {
        memoryLimit: settings.memoryLimit,
        lockWaitMs: options.lockWaitMs,
        threads: options.threads,
      });
      progress(`load: warehouse open in ${((Date.now() - openStarted) / 1000).toFixed(1)} s`);
    }
  } catch (error) {
    beat.stop();
    throw error;
  }
  try {
    // the uploads any API machine committed in PostgreSQL, into the landing area first (src/intake/)
    if (fromLanding) await takeInForLoad(paths.landingDir, beat, progress);
    // with cells, other cells' drivers' records leave for their cells before anything is listed
    if (fromLanding)
      await splitForCells(paths.landingDir, options.dataDir, { quietMs: options.quietMs ?? 0, now }, progress);
    // with cells, the packages of drivers moved into this cell are imported (src/cells/move-import.ts)
    const moved = fromLanding ? await takeInMoves(wh, paths, now, progress) : [];
    if (fromLanding) beat.doing(`load: putting SDK uploads in ${paths.landingDir} together into batch files`);
    // with the warehouse held, so that no other load batches the same uploads
    const batched = fromLanding
      ? await batchUploads(
          paths.landingDir,
          options.uploadBatchBytes ?? settings.uploadBatchBytes,
          uploadLedger(wh.conn, now),
        )
      : null;
    if (batched && batched.files.length > 0) {
      const copies =
        batched.duplicates > 0
          ? ` (${batched.duplicates} byte-identical to an earlier upload or a loaded file, left out)`
          : '';
      progress(
        `load: ${batched.uploads} SDK upload file(s) put together into ${batched.files.length} batch file(s), ${(batched.bytes / 2 ** 20).toFixed(1)} MiB${copies}`,
      );
    }
    if (batched?.staleTemps)
      progress(
        `load: ${batched.staleTemps} unfinished SDK upload .tmp file(s) over an hour old removed from ${paths.landingDir} (an API stopped while writing them; never answered 202)`,
      );
    if (batched?.error)
      progress(`load: SDK uploads not all batched (${batched.error}): the rest load as files of their own`);
    beat.doing(`load: listing ${fromLanding ? paths.landingDir : 'the --input files'}`);
    // before the listing: a file written since it was taken is taken again, whole, in this run
    const retaken = fromLanding ? retakeChanged(paths.landingDir) : [];
    for (const r of retaken)
      progress(
        `load: ${r.archived} was written after it was loaded (${r.bytesLoaded} -> ${r.bytesNow} bytes): taken again whole as ${r.back}`,
      );
    const listed = fromLanding ? landingFiles(paths.landingDir) : expandInputs(options.inputs ?? []);
    for (const r of listed.renamed ?? [])
      progress(`load: a landing file's name is not UTF-8 (${JSON.stringify(r.from)}): renamed ${r.to} to be taken`);
    const quiet = holdBackSettling(listed.files, fromLanding ? (options.quietMs ?? 0) : 0);
    if (quiet.settling.length > 0)
      progress(
        `load: ${quiet.settling.length} partner file(s) written within the last ${options.quietMs} ms left for a later run (maybe still being written)`,
      );
    const inTurn = uploadsInTurn(quiet.files, batched?.listed ?? null);
    const { later } = inTurn;
    const { refused } = listed;
    const intake: LandingIntake = {
      retaken: retaken.length,
      settling: quiet.settling.length,
      vanished: 0,
      renamed: listed.renamed?.length ?? 0,
    };
    const taken: TakenFile[] = [];
    // a large partner file goes a slice at a time (src/load/slices.ts); the uploads with each
    const sliced = fromLanding
      ? await SliceRun.take(
          wh.conn,
          paths.landingDir,
          inTurn.files,
          {
            sliceBytes: options.sliceBytes ?? settings.sliceBytes,
            maxSlices: options.maxSlices ?? Number.POSITIVE_INFINITY,
            planAside: options.planSlicesAside ?? false,
            now,
          },
          (m) => progress(`load: ${m}`),
        )
      : null;
    const files = sliced?.files ?? inTurn.files;
    progress(`load: ${files.length} file(s) ${fromLanding ? `from ${paths.landingDir}` : 'given'}`);
    if (later > 0)
      progress(`load: ${later} SDK upload(s) that came while the others were batched wait for the next load`);
    for (const r of refused)
      progress(`load: ${r.file}: not loaded, not a regular file (${r.kind}): never followed, left where it is`);
    const reports: FileReport[] = [];
    const day = now.toISOString().slice(0, 10);
    let t0 = Date.now();
    // the same route files the load writes per file, and the publish any still missing
    const routes = {
      ...routeOptions(paths, settings.pointsRetentionDays, now),
      incremental: options.routesIncremental ?? false,
    };
    // the files being read, validated and derived now (two at a time by default)
    const inFlight = new Map<number, string>();
    const deriving = () => {
      // not `[2/10]`: that names a file finished (the line a watcher, or test/load/kill.test.ts, waits for)
      if (inFlight.size > 0)
        beat.doing(
          `load: deriving ${[...inFlight].map(([i, f]) => `${f} (${i + 1} of ${files.length})`).join(' and ')}`,
        );
    };
    const onStart = (file: string, index: number) => {
      inFlight.set(index, sliced?.start(file) ?? file);
      deriving();
    };
    await loadFiles(
      wh,
      files,
      {
        onStart,
        pointsDir: paths.pointsDir,
        now,
        parseBytes: options.parseBytes,
        pointsPerPart: options.pointsPerPart ?? settings.pointsPerPart,
        afterStage: options.afterStage,
        concurrency: options.concurrency ?? settings.loadConcurrency,
        routes,
        // the purge finds a file's archive by this day and its name (src/purge/index.ts)
        ...(fromLanding ? { archiveDay: day } : {}),
        standsFor: (file) => sliced?.standsFor(file),
      },
      ({ file, report: loaded, error, identity }, index) => {
        let report: FileReport;
        const slice = sliced?.settle(file, { report: loaded, error });
        // renamed or removed by its writer since the listing: not a failure, and under its new name
        // it is listed again (already loaded, its bytes are skipped)
        if (!slice && !loaded && fromLanding && kindOf(file) === null) {
          intake.vanished++;
          inFlight.delete(index);
          progress(
            `load: [${index + 1}/${files.length}] ${file}: gone since the listing (renamed or removed by its writer)`,
          );
          return;
        }
        if (slice) report = slice;
        else if (loaded) {
          report = loaded;
          const archived = fromLanding ? moveLanded(paths.landingDir, file, day, 'loaded') : null;
          if (fromLanding && archived === null) {
            intake.vanished++;
            progress(`load: ${file}: loaded, then gone before it was archived (renamed or removed by its writer)`);
          }
          if (archived !== null && identity)
            taken.push({ archived, name: basename(file), identity, takenAt: Date.now() });
        } else if (error instanceof ChangedDuringLoadError) {
          // nothing of it was kept, and it stays where it is: the next run takes it again
          report = {
            ...emptyFileReport(file, false),
            failed: firstLine(error),
            failedBy: 'changed_during_load',
            retry: true,
          };
        } else if (isMachineError(error)) {
          // the disk is full (or read-only, or failing), not the file wrong: it stays where it is
          // and the batch fails, so that the continuous load tries again once there is room
          throw error;
        } else {
          // One file must not hold up the others: one that cannot be read, or whose change fails a
          // check (rolled back whole), is set aside with its reason (the check and an example row).
          const failedBy = error instanceof CheckFailedError ? (error.failures[0]?.check ?? 'checks') : 'unreadable';
          report = { ...emptyFileReport(file, false), failed: firstLine(error), failedBy };
          // a batch of many uploads is not one partner's file: it goes back record by record
          const pieces = fromLanding && error instanceof CheckFailedError ? splitBatch(file) : 0;
          if (pieces > 0)
            report = {
              ...report,
              failed: `${report.failed}; its ${pieces} records go back into the landing area to load one by one`,
              retry: true,
            };
          else if (fromLanding) moveLanded(paths.landingDir, file, day, 'failed', report.failed);
        }
        reports.push(report);
        inFlight.delete(index);
        deriving();
        const summary = report.failed
          ? `FAILED: ${report.failed}`
          : report.skipped
            ? 'already loaded, skipped'
            : `${describe(report)}${report.routesDeferred ? `; route files left to the publish: ${report.routesDeferred}` : ''}`;
        // files are derived two at a time but finish in order: the time is since the previous one finished
        progress(
          `load: [${index + 1}/${files.length}] ${sliced?.label(file) ?? file}: ${summary} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        );
        t0 = Date.now();
      },
    );
    if (fromLanding) recordTaken(paths.landingDir, taken);
    beat.doing('load: pruning raw points and landing archives past retention');
    const today = todayIn('UTC', now);
    const removed = prunePoints(paths.pointsDir, settings.pointsRetentionDays, today);
    // the routes the API serves go with the raw points they were copied from (same days)
    prunePoints(paths.routesDir, settings.pointsRetentionDays, today);
    if (removed.length > 0)
      progress(`load: pruned raw points of ${removed.length} day(s) older than ${settings.pointsRetentionDays} days`);
    const archived = pruneLandingArchive(paths.landingDir, settings.pointsRetentionDays, today);
    // the uploads of batch files gone with the archive are forgotten with them: the same cut, the
    // start of the oldest (UTC) day the archive keeps, so neither outlives the other
    const oldest = `${addDays(today, -settings.pointsRetentionDays)}T00:00:00Z`;
    // the cut moves once a day: a held warehouse (the watch's) prunes at its first batch of a day
    if (prunedUploadsTo.get(wh) !== oldest) {
      await runFile(wh.conn, 'ops/load/prune_loaded_uploads', { oldest });
      prunedUploadsTo.set(wh, oldest);
    }
    if (archived.length > 0) progress(`load: pruned ${archived.length} landing archive folder(s)`);
    // route files merged by date and serving files no manifest names removed, before this publish
    await compactQuietly(wh.conn, paths, {
      now,
      retentionDays: settings.pointsRetentionDays,
      progress,
      maxMerges: options.compactMerges ?? Infinity,
    });
    beat.doing('load: purging deleted accounts');
    // the purge step (src/purge/step.ts; node jobs/purge.js runs it alone): deletion requests from the state store
    const purged = await runPurge(wh, paths, now, progress, 'load');
    // with cells: the percentiles ranked again against what other cells posted since (src/cells/)
    await rankAcrossCells(wh, options.dataDir, [], progress, 'load');
    progress('load: publishing');
    beat.doing('load: publishing');
    let events: EmitResult | undefined;
    const published = await publish(wh, {
      publishedDir: paths.publishedDir,
      manifestFile: paths.manifestFile,
      lockWaitMs: settings.publishLockWaitMs,
      now,
      progress: (m) => progress(`load: ${m}`),
      routes,
      settleRetired: options.settleRetired ?? true,
      ...(options.heldLayers ? { heldLayers: options.heldLayers } : {}),
      // the events go out as soon as the trips are served, before the retired slot is caught up
      onSwitched: async (version) => {
        options.onPublished?.(version);
        beat.doing('load: writing webhook events');
        events = await emitEvents(wh, paths.eventsDir, version, now);
      },
    });
    progress(`load: publish ${published.detail}`);
    events ??= await emitEvents(wh, paths.eventsDir, published.version, now);
    await recordArrivals(wh, options.dataDir, moved, published.version, progress);
    if (events.file)
      progress(
        `load: ${events.tripCreated} trip.created, ${events.tripUpdated} trip.updated, ${events.safetyScoreUpdated} safety_score.updated and ${events.userDeleted} user.deleted event(s) in ${events.file}`,
      );
    // load.js (not the continuous load, which merges while idle) merges each archive day before today whole
    if (!held) await compactArchiveStep(wh.conn, paths.landingDir, now, { everything: true, before: today, progress });
    // last: the warehouse file is rewritten, so nothing may write to it after this
    const erasure = await finishErasure(wh, paths, purged, progress, 'load');
    // a small load's log is replayed by the next open rather than checkpointed now: for a tiny
    // file the checkpoint, and the next load's dearer first commit on the tables it rewrote, were
    // a fifth of that next load's CPU (docs/benchmarks.md); after an erasure the file was just written anew
    if (!erasure.warehouse && !held) await skipSmallCloseCheckpoint(wh.conn, paths.warehouseFile);
    const summed = totals(reports);
    return {
      files: reports,
      uploadBatches: batched && withoutListing(batched),
      refused,
      intake,
      refusedNamed: !fromLanding && refused.length > 0,
      totals: summed,
      reasons: reasonCounts(summed),
      publish: published,
      pointsPartitionsRemoved: removed,
      purged,
      events,
      erasure,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    if (!held) wh.close();
    beat.stop();
  }
}

function describe(report: FileReport): string {
  const t = totals([report]);
  const rejected = Object.values(t.rejected).reduce((a, b) => a + b, 0);
  return `${t.tripsLoaded} trips (${t.tripsReplaced} replaced), ${rejected} rejected, ${t.pointsKept}/${t.pointsRead} points kept`;
}
