import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { currentCell } from '../cells/cell.js';
import { rankPending } from '../cells/rank.js';
import { leavingDue } from '../cells/move-leave.js';
import type { StateDb } from '../state/db.js';
import { join } from 'node:path';
import { getPriority, setPriority } from 'node:os';
import { HeldLayers } from '../publish/held-layers.js';
import { announceGivingWay, processesWaitingFor, describeHolder } from '../db/open.js';
import { duckdbThreads } from '../db/threads.js';
import { WaitingFiles, landingStatus, waitingFiles } from '../landing-status.js';
import { landingReady } from '../load/quiet.js';
import { takenChanged } from '../load/retake.js';
import { compactArchiveStep } from '../load/archive-compact.js';
import { Histogram, LAG_BUCKETS, type WatchMetrics } from '../metrics/watch-textfile.js';
import { silent, type Progress } from '../progress.js';
import { openState } from '../state/open.js';
import { pendingDeletions } from '../state/deletions.js';
import { runLoad } from './load.js';
import { appsOf } from './data-dir.js';
import { jobSettings, pathsFor } from '../config.js';
import { setting } from '../settings.js';
import { openWarehouse, type Warehouse } from '../warehouse/warehouse.js';
import { loadSummary } from './summaries.js';
import { exitCodeOf } from './cli.js';
import { firstLine } from '../errors.js';
import { Pace } from './pace.js';
import { AcceptedUploads } from '../intake/watch-hook.js';
import { compactIdle } from '../compact/step.js';
import { Wakeup, watchFolder } from './wakeup.js';
import { writeMetrics, writeMetricsFile, type BatchOutcome } from './watch-metrics.js';

export type { BatchOutcome } from './watch-metrics.js';

export interface WatchOptions {
  dataDir: string;
  progress?: Progress;
  /** Every line of every batch (default: one line a batch, and what failed). */
  verbose?: boolean;
  /** How often the landing area and the deletion requests are looked at when no change is signalled (ms). */
  pollMs?: number;
  /** How long a batch waits, once a file has arrived, for more to come with it (ms). */
  gatherMs?: number;
  /** Files a second (counted over the last 30 s) from which the watch rests the whole `maxRestMs` after a batch (default 5). */
  busyPace?: number;
  /**
   * The rest after a batch while files arrive at `busyPace` or faster (ms; default 10 s), and so
   * what resting may add to the lag; at a slower pace the rest shrinks in proportion. Each batch
   * pays a fixed cost (a transaction, a publish, a serving pack delta, a snapshot switch in every
   * API process): resting lets a busy stream gather into few, large batches, while a trickle is
   * still loaded almost at once. 0: back to back.
   */
  maxRestMs?: number;
  /** Where the metrics files go (null: none). */
  metricsDir?: string | null;
  /** Stops the watch after the batch in hand (SIGTERM in the job). */
  signal?: AbortSignal;
  /** Told after every batch (tests and the bench follow the watch through it). */
  onBatch?: (batch: BatchOutcome) => void;
  /** Seconds to wait before trying again after a failed batch, doubled per failure up to 60 s. */
  retryAfterMs?: number;
  /** A partner file is taken once it has not been written for this long (default DRIVING_LANDING_QUIET_MS). */
  quietMs?: number;
}

export interface WatchResult {
  batches: number;
  failedBatches: number;
  filesLoaded: number;
  filesFailed: number;
  tripsLoaded: number;
  lagP50Seconds: number | null;
  lagP99Seconds: number | null;
  seconds: number;
}

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
  const started = Date.now();
  const progress = options.progress ?? silent;
  const paths = pathsFor(options.dataDir);
  const pollMs = options.pollMs ?? 1000;
  const gatherMs = options.gatherMs ?? 100;
  const busyPace = options.busyPace ?? DEFAULT_BUSY_PACE;
  const maxRestMs = options.maxRestMs ?? DEFAULT_MAX_REST_MS;
  const quietMs = options.quietMs ?? setting('DRIVING_LANDING_QUIET_MS');
  const pace = new Pace();
  const waiting = new WaitingFiles(paths.landingDir);
  // when the last batch ended (ms since the epoch): the rest counts from there
  let restFrom = 0;
  // the rest's end at `now`: the whole `maxRestMs` at the busy pace, in proportion below it; the
  // pace counts the files waiting (`arrivals`, their arrival times), so a rest that began quiet
  // grows with a burst arriving meanwhile, and the burst loads as one batch, not as a run of
  // growing ones; with nothing arriving the pace falls as time passes, and the rest shortens
  const restUntil = (now: number, arrivals: number[]): number => {
    if (busyPace <= 0) return restFrom + maxRestMs;
    return restFrom + maxRestMs * Math.min(1, pace.perSecond(now, arrivals) / busyPace);
  };
  // when a batch last looked at every route file (ms since the epoch)
  let routesUpkeptAt: number | null = null;
  mkdirSync(paths.landingDir, { recursive: true });
  yieldCpu(progress);
  const metrics: WatchMetrics = {
    startedAt: new Date(started),
    lag: new Histogram(LAG_BUCKETS),
    batches: { ok: 0, failed: 0 },
    lastBatchAt: null,
    lastBatchSeconds: null,
    backlog: { waiting: 0, oldestWaitingSeconds: null },
  };
  const totals = { filesLoaded: 0, filesFailed: 0, tripsLoaded: 0 };
  const wake = new Wakeup(options.signal);
  const watcher = watchFolder(paths.landingDir, () => wake.fire());
  const state = await openState({ dataDir: options.dataDir });
  // uploads any API machine committed in PostgreSQL wake the watch as well (src/intake/)
  const accepted = await AcceptedUploads.start(() => wake.fire(), progress);
  // a job waiting for the warehouse waits while a batch lasts, not only its own limit: it gets the
  // warehouse between batches, and a large partner file goes a slice a batch
  const stopGivingWay = announceGivingWay(paths.warehouseFile);
  progress(
    `load: watching ${paths.landingDir} (and the deletion requests); a batch loads and publishes what has arrived, then the watch rests up to ${maxRestMs / 1000} s (all of it at ${busyPace} files/s or more, less in proportion below)`,
  );
  let failures = 0;
  let metricsWrittenAt = 0;
  let held: Warehouse | null = null;
  // the served pack's layers, parsed once rather than at every batch's publish
  const heldLayers = new HeldLayers();
  // the first batch runs whatever is there: it finishes what a killed watch or load left behind
  let due = true;
  // whether the published files may have upkeep left (after a batch, until a step finds none)
  let compactPending = false;
  try {
    for (let n = 1; !options.signal?.aborted; ) {
      if (!due) {
        await wake.wait(pollMs);
        if (options.signal?.aborted) break;
        // the heartbeat an alert watches, also while nothing arrives
        if (options.metricsDir && Date.now() - metricsWrittenAt >= HEARTBEAT_MS) {
          metricsWrittenAt = Date.now();
          writeMetricsFile(options.metricsDir, metrics, progress);
        }
        // a job waiting for the warehouse gets it while nothing is due
        if (held && processesWaitingFor(paths.warehouseFile).length > 0) held = release(held);
        // idle: the published files' upkeep, a merge a poll, until nothing is left (src/compact/step.ts)
        if (held && compactPending) compactPending = await compactIdle(held.conn, paths, progress);
        // a link, or a partner file still within its quiet period, makes no batch: the next poll
        // looks again
        due =
          landingReady(paths.landingDir, quietMs) ||
          takenChanged(paths.landingDir) ||
          hasBatchedLeftovers(paths.landingDir) ||
          (await accepted?.any()) === true ||
          (await pendingDeletions(state, currentCell())).length > 0 ||
          // drivers moved to another cell, served there long enough to be erased here (src/cells/move-leave.ts)
          (await leavingDue(state)) ||
          // another cell posted score counts: this cell's percentiles are ranked again (src/cells/rank.ts)
          (await peersPosted(held, state));
        // idle: one bounded merge of the landing archive's day files (src/load/archive-compact.ts)
        if (!due && held) await compactArchiveStep(held.conn, paths.landingDir, new Date(), { progress });
        if (!due) continue;
        // a moment for the rest of a burst, so that it loads as one batch
        await wake.sleep(gatherMs);
      }
      // files that come while the watch rests join the next batch; a job waiting for the
      // warehouse gets it meanwhile
      let arrivals: number[] = [];
      for (let lookedAt = 0; !options.signal?.aborted; ) {
        const now = Date.now();
        if (now - lookedAt >= REST_LOOK_MS) {
          lookedAt = now;
          if (held && processesWaitingFor(paths.warehouseFile).length > 0) held = release(held);
          arrivals = [...waiting.read().values()];
        }
        const until = restUntil(now, arrivals);
        if (until <= now) break;
        await wake.sleep(Math.min(REST_TICK_MS, until - now));
      }
      if (options.signal?.aborted) break;
      if (processesWaitingFor(paths.warehouseFile).length > 0) {
        held = release(held);
        await giveWay(paths.warehouseFile, progress, options.signal);
      }
      // taken in before the listing, so that their lag and pace count as the landing files' do
      if (accepted) await accepted.takeIn(paths.landingDir);
      const arrived = waitingFiles(paths.landingDir);
      const batchStarted = Date.now();
      const outcome: BatchOutcome = { n, seconds: 0, lags: [] };
      try {
        const lines: string[] = [];
        let servedAt: number | null = null;
        // held between batches (no open, no replay of the log each time) until another job waits;
        // waiting for another job's turn is what the watch does: no giving up, one DuckDB thread
        held ??= await openWarehouse(paths.warehouseFile, await appsOf(options.dataDir), {
          memoryLimit: jobSettings().memoryLimit,
          lockWaitMs: 24 * 3600_000,
          threads: duckdbThreads() ?? 1,
        });
        // every route file within retention is looked at by the first batch and once a day; the
        // batches between look after their own and the reported ones (src/publish/route-step.ts)
        const fullRoutes = routesUpkeptAt === null || Date.now() - routesUpkeptAt >= FULL_ROUTE_UPKEEP_MS;
        const result = await runLoad({
          warehouse: held,
          routesIncremental: !fullRoutes,
          dataDir: options.dataDir,
          progress: options.verbose ? progress : (line) => lines.push(line),
          // the API shares the machine: a small batch gains little from a second lane, and the
          // retired slot is written by the next batch anyway
          concurrency: 1,
          settleRetired: false,
          heldLayers,
          // one slice of a large partner file a batch, with every upload waiting (src/load/slices.ts)
          maxSlices: 1,
          planSlicesAside: true,
          onPublished: () => (servedAt = Date.now()),
          compactMerges: 1,
          quietMs,
        });
        outcome.result = result;
        if (fullRoutes) routesUpkeptAt = batchStarted;
        servedAt ??= Date.now();
        // the purge's erasure wrote the warehouse file anew: the next batch opens that one
        if (result.erasure.warehouse) held = release(held);
        for (const [file, arrivedAt] of arrived) {
          if (existsSync(join(paths.landingDir, file))) continue;
          outcome.lags.push(Math.max(0, (servedAt - arrivedAt) / 1000));
          pace.add(arrivedAt);
        }
        for (const lag of outcome.lags) metrics.lag.observe(lag);
        metrics.batches.ok++;
        compactPending = true;
        failures = 0;
        const t = result.totals;
        totals.filesLoaded += t.files - t.filesSkipped - t.filesFailed;
        totals.filesFailed += t.filesFailed;
        totals.tripsLoaded += t.tripsLoaded;
        if (!options.verbose) for (const line of lines) if (/FAILED|failed/.test(line)) progress(line);
        const { retaken, vanished, renamed } = result.intake;
        if (t.files > 0 || result.publish.published || result.purged.users > 0 || retaken + vanished + renamed > 0)
          progress(`load: batch ${n}: ${loadSummary(result).split('\n')[0]}`);
      } catch (error) {
        // whatever failed, the next try starts from a fresh open
        held = release(held);
        outcome.error = firstLine(error, Number.POSITIVE_INFINITY);
        metrics.batches.failed++;
        failures++;
        progress(
          `load: batch ${n} failed (exit ${exitCodeOf(error)}): ${outcome.error}; trying again in ${Math.round(backoff(options.retryAfterMs ?? 5000, failures) / 1000)} s`,
        );
      }
      outcome.seconds = (Date.now() - batchStarted) / 1000;
      metrics.lastBatchAt = new Date();
      metrics.lastBatchSeconds = outcome.seconds;
      const backlog = landingStatus(paths.landingDir);
      metrics.backlog = { waiting: backlog.waiting, oldestWaitingSeconds: backlog.oldestWaitingSeconds };
      if (options.metricsDir) {
        metricsWrittenAt = Date.now();
        writeMetrics(options.metricsDir, metrics, outcome, batchStarted, progress);
      }
      options.onBatch?.(outcome);
      n++;
      if (outcome.error !== undefined) {
        await wake.sleep(backoff(options.retryAfterMs ?? 5000, failures));
        due = true;
      } else {
        // what arrived during the batch is the next batch's, after the rest: the busier the
        // stream, the longer (a trickle is loaded at once, a burst in batches of the whole rest's
        // arrivals, the fewest its lag allows)
        due = landingReady(paths.landingDir, quietMs) || takenChanged(paths.landingDir);
        restFrom = Date.now();
      }
    }
  } finally {
    stopGivingWay();
    release(held);
    heldLayers.releaseAll();
    watcher?.close();
    wake.close();
    await accepted?.close();
  }
  return {
    batches: metrics.batches.ok + metrics.batches.failed,
    failedBatches: metrics.batches.failed,
    ...totals,
    lagP50Seconds: metrics.lag.quantile(0.5),
    lagP99Seconds: metrics.lag.quantile(0.99),
    seconds: (Date.now() - started) / 1000,
  };
}

/**
 * The API answers on the same machine: the watch runs 5 steps nicer than it was started (best
 * effort), so a burst of uploads slows the batches rather than the answers.
 */
function yieldCpu(progress: Progress): void {
  try {
    setPriority(Math.min(19, getPriority() + 5));
  } catch (error) {
    progress(`load: priority left as it is (${firstLine(error)})`);
  }
}

/** Closes the warehouse the watch holds, if any (a close checkpoints it); null, to assign. */
function release(wh: Warehouse | null): null {
  try {
    wh?.close();
  } catch {
    // a close that cannot checkpoint (a full disk) leaves the log, which the next open replays
  }
  return null;
}

/** The rest after a batch at a busy pace, and that pace, in files a second. */
const DEFAULT_MAX_REST_MS = 10_000;
const DEFAULT_BUSY_PACE = 5;

/** How often a batch looks at every route file within retention, not only its own and the reported ones. */
const FULL_ROUTE_UPKEEP_MS = 24 * 3600_000;

/**
 * How often a resting watch looks for a job waiting for the warehouse and at the files waiting (the
 * rest follows their pace): a look costs two folder listings, and a job waits a batch anyway.
 */
const REST_LOOK_MS = 500;

/** How often a resting watch works its rest's end out again between looks (the pace falls as time passes). */
const REST_TICK_MS = 100;

/** How often the watch's metrics file is written while no batch runs. */
const HEARTBEAT_MS = 15_000;

const backoff = (first: number, failures: number): number => Math.min(60_000, first * 2 ** Math.max(0, failures - 1));

/** Uploads a killed load left half-batched (src/load/uploads.ts): the next batch puts them back. */
function hasBatchedLeftovers(landingDir: string): boolean {
  try {
    return readdirSync(join(landingDir, '.uploads-batched')).length > 0;
  } catch {
    return false;
  }
}

/**
 * Waits while another process waits for the warehouse, so that it gets it before this process
 * takes it again; the batch then opens it as soon as that process lets go.
 */
async function giveWay(warehouseFile: string, progress: Progress, signal?: AbortSignal): Promise<void> {
  let said = false;
  while (!signal?.aborted) {
    const waiting = processesWaitingFor(warehouseFile);
    if (waiting.length === 0) return;
    if (!said) {
      progress(
        `load: letting ${waiting.map((pid) => describeHolder(`held in ? (PID ${pid})`)).join(', ')} have the warehouse first`,
      );
      said = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The one line the watch ends with. */
export function watchSummary(r: WatchResult): string {
  const lag =
    r.lagP50Seconds === null
      ? 'no file arrived'
      : `lag p50 ${r.lagP50Seconds.toFixed(1)} s, p99 ${(r.lagP99Seconds ?? 0).toFixed(1)} s`;
  return `watched ${(r.seconds / 60).toFixed(1)} min: ${r.batches} batch(es) (${r.failedBatches} failed), ${r.filesLoaded} file(s) loaded, ${r.filesFailed} failed, ${r.tripsLoaded} trips; ${lag}`;
}

/** Whether another cell posted score counts this cell's held warehouse has not ranked against (false without cells, or when the store does not answer). */
async function peersPosted(held: Warehouse | null, state: StateDb): Promise<boolean> {
  const cell = currentCell();
  if (!cell || !held) return false;
  return rankPending(held, state, cell).catch(() => false);
}
