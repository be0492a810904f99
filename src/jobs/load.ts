import { rankAcrossCells } from '../cells/rank-step.js';
import { recordArrivals } from '../cells/move-step.js';
import { reasonCounts, totals } from '../load/report.js';
import { runPurge } from '../purge/step.js';
import { deriveInputs, routesOf } from './load-derive.js';
import { finishLoad, publishAndAnnounce, upkeepBeforePublish } from './load-finish.js';
import { listInputs, takeInLanding } from './load-intake.js';
import { openLoad } from './load-run.js';
import type { LoadOptions, LoadResult } from './load-types.js';
import { withoutListing } from './load-uploads.js';

export type { LoadOptions, LoadResult } from './load-types.js';

/**
 * The load job: every input file (default: what is new in the landing area) is validated, derived
 * and merged in its own transaction; then old raw points are pruned and the result is published.
 * Publishing runs even when no file was new, which repairs a publish an earlier run did not finish.
 * Each step is a function of its own (docs/journey.md follows them).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const started = Date.now();
  const run = await openLoad(options);
  const { wh, progress } = run;
  try {
    // uploads from PostgreSQL, other cells' records sent on, SDK uploads put into batch files
    const { batched, moved } = await takeInLanding(run);
    // what this run takes, what waits, what is refused
    const listing = await listInputs(run, batched);
    const routes = routesOf(run);
    // each file derived and merged in its own transaction, then archived or set aside
    const reports = await deriveInputs(run, listing, routes);
    // retention, and the published files' upkeep
    const removed = await upkeepBeforePublish(run);
    // deletion requests from the state store (src/purge/step.ts; node jobs/purge.js runs it alone)
    run.beat.doing('load: purging deleted accounts');
    const purged = await runPurge(wh, run.paths, run.now, progress, 'load');
    // with cells: the percentiles ranked again against what other cells posted since (src/cells/)
    await rankAcrossCells(wh, options.dataDir, [], progress, 'load');
    const { published, events } = await publishAndAnnounce(run, routes);
    // drivers moved into this cell are served here from this version on (src/cells/move-step.ts)
    await recordArrivals(wh, options.dataDir, moved, published.version, progress);
    const erasure = await finishLoad(run, purged);
    const summed = totals(reports);
    return {
      files: reports,
      uploadBatches: listing.batched && withoutListing(listing.batched),
      refused: listing.refused,
      intake: listing.intake,
      refusedNamed: !run.fromLanding && listing.refused.length > 0,
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
    if (!run.held) wh.close();
    run.beat.stop();
  }
}
