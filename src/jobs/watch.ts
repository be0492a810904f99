import { ContinuousLoad } from './watch-loop.js';
import type { WatchOptions, WatchResult } from './watch-types.js';

export type { BatchOutcome } from './watch-metrics.js';
export type { WatchOptions, WatchResult } from './watch-types.js';

/**
 * The continuous load (`load.js --watch`): stays up, and whenever files arrive in the landing area
 * (SDK uploads, partner files) or an account's deletion is pending, runs one load over what is
 * there: the nightly load itself, with every rule, check, event, purge and atomic switch, on a
 * small batch. It holds the warehouse between batches and lets it go as soon as another process
 * waits for it (DuckDB's lock has no queue: a waiting process says so in the folder `openDatabase`
 * keeps), idle or between two batches: every other job waits at most about one batch.
 *
 * A batch that fails (a check that stops the publish, a full disk) is reported, counted and tried
 * again later; the watch goes on. Killed anywhere, nothing is lost: a batch is the plain load,
 * whose files are in the warehouse whole or not at all, and the next start catches up.
 */
export async function runWatch(options: WatchOptions): Promise<WatchResult> {
  const watch = await ContinuousLoad.start(options);
  try {
    // the first batch runs whatever is there: it finishes what a killed watch or load left behind
    while (!watch.stopped) {
      // idle: the heartbeat, upkeep of the published files, until files, uploads, a deletion or
      // another cell's counts make a batch due
      if (!watch.due && !(await watch.idleUntilDue())) continue;
      // the rest after the last batch, as long as the pace of arrivals asks
      await watch.rest();
      if (watch.stopped) break;
      // a job waiting for the warehouse gets it first
      await watch.giveWayIfAsked();
      // one small load of what has arrived, published
      const outcome = await watch.batch();
      // its metrics, then a back-off after a failure or the next batch's due
      await watch.afterBatch(outcome);
    }
  } finally {
    await watch.close();
  }
  return watch.result();
}

/** The one line the watch ends with. */
export function watchSummary(r: WatchResult): string {
  const lag =
    r.lagP50Seconds === null
      ? 'no file arrived'
      : `lag p50 ${r.lagP50Seconds.toFixed(1)} s, p99 ${(r.lagP99Seconds ?? 0).toFixed(1)} s`;
  return `watched ${(r.seconds / 60).toFixed(1)} min: ${r.batches} batch(es) (${r.failedBatches} failed), ${r.filesLoaded} file(s) loaded, ${r.filesFailed} failed, ${r.tripsLoaded} trips; ${lag}`;
}
