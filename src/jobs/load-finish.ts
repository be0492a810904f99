import { compactQuietly } from '../compact/step.js';
import { runFile } from '../db/sql.js';
import { emitEvents, type EmitResult } from '../events/emit.js';
import { compactArchiveStep } from '../load/archive-compact.js';
import { pruneLandingArchive, prunePoints } from '../load/retention.js';
import { publish, type PublishResult } from '../publish/publish.js';
import type { Erasure } from '../purge/erase.js';
import type { PurgeResult } from '../purge/purge.js';
import { finishErasure } from '../purge/step.js';
import { addDays, todayIn } from '../time.js';
import { skipSmallCloseCheckpoint } from '../warehouse/close-checkpoint.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import type { RunRoutes } from './load-derive.js';
import type { LoadRun } from './load-run.js';

/** The cut each open warehouse's loaded uploads were last pruned to (sql/ops/load/prune_loaded_uploads.sql). */
const prunedUploadsTo = new WeakMap<Warehouse, string>();

/**
 * Raw points, route files and landing archives past retention pruned, then the route files merged
 * by date and serving files no manifest names removed, before the publish. The partitions of raw
 * points removed.
 */
export async function upkeepBeforePublish(run: LoadRun): Promise<string[]> {
  const { paths, settings, beat, progress, wh, now } = run;
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
  await compactQuietly(wh.conn, paths, {
    now,
    retentionDays: settings.pointsRetentionDays,
    progress,
    maxMerges: run.options.compactMerges ?? Infinity,
  });
  return removed;
}

/** The publish, and the webhook events it made true as soon as the API serves them. */
export async function publishAndAnnounce(
  run: LoadRun,
  routes: RunRoutes,
): Promise<{ published: PublishResult; events: EmitResult }> {
  const { paths, settings, beat, progress, wh, now, options } = run;
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
  if (events.file)
    progress(
      `load: ${events.tripCreated} trip.created, ${events.tripUpdated} trip.updated, ${events.safetyScoreUpdated} safety_score.updated and ${events.userDeleted} user.deleted event(s) in ${events.file}`,
    );
  return { published, events };
}

/**
 * After the publish: load.js (not the continuous load, which merges while idle) merges each
 * archive day before today whole; then a purge's erasure rewrites the warehouse file, so nothing
 * may write to it after this.
 */
export async function finishLoad(run: LoadRun, purged: PurgeResult): Promise<Erasure> {
  const { paths, progress, wh, now, held } = run;
  if (!held)
    await compactArchiveStep(wh.conn, paths.landingDir, now, {
      everything: true,
      before: todayIn('UTC', now),
      progress,
    });
  const erasure = await finishErasure(wh, paths, purged, progress, 'load');
  // a small load's log is replayed by the next open rather than checkpointed now: for a tiny
  // file the checkpoint, and the next load's dearer first commit on the tables it rewrote, were
  // a fifth of that next load's CPU (docs/benchmarks.md); after an erasure the file was just written anew
  if (!erasure.warehouse && !held) await skipSmallCloseCheckpoint(wh.conn, paths.warehouseFile);
  return erasure;
}
