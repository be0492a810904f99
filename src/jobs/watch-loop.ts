import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { join } from 'node:path';
import { currentCell } from '../cell.js';
import { rankPending, type RankedSeen } from '../cells/rank.js';
import { leavingDue } from '../cells/move-leave.js';
import { compactIdle } from '../compact/step.js';
import { pathsFor, type Paths } from '../data-folder.js';
import { jobSettings } from '../job-settings.js';
import { announceGivingWay, describeHolder, processesWaitingFor } from '../db/open.js';
import { duckdbThreads } from '../db/threads.js';
import { firstLine } from '../errors.js';
import { AcceptedUploads } from '../intake/watch-hook.js';
import { landingStatus, WaitingFiles, waitingFiles } from '../landing-status.js';
import { compactArchiveStep } from '../load/archive-compact.js';
import { landingReady } from '../load/quiet.js';
import { takenChanged } from '../load/retake.js';
import { WatchMetrics } from '../metrics/watch-textfile.js';
import { silent, type Progress } from '../progress.js';
import { HeldLayers } from '../publish/held-layers.js';
import { setting } from '../settings.js';
import type { StateDb } from '../state/db.js';
import { pendingDeletions } from '../state/deletions.js';
import { openState } from '../state/open.js';
import { openWarehouse, type Warehouse } from '../warehouse/warehouse.js';
import { exitCodeOf } from './cli.js';
import { appsOf } from './data-dir.js';
import { runLoad } from './load.js';
import { outputWriteErrors } from './output.js';
import { Pace } from './pace.js';
import { loadSummary } from './summaries.js';
import { Wakeup, watchFolder } from './wakeup.js';
import { writeMetrics, writeMetricsFile, type BatchOutcome } from './watch-metrics.js';
import type { WatchOptions, WatchResult } from './watch-types.js';

/**
 * The continuous load's state between its steps (src/jobs/watch.ts tells them in order): the
 * wake-up and what makes a batch due, the rest that follows the pace of arrivals, the batch, and
 * the back-off after a failed one.
 */
export class ContinuousLoad {
  private readonly started = Date.now();
  private readonly progress: Progress;
  private readonly paths: Paths;
  private readonly pollMs: number;
  private readonly gatherMs: number;
  private readonly busyPace: number;
  private readonly maxRestMs: number;
  private readonly quietMs: number;
  private readonly pace = new Pace();
  private readonly waiting: WaitingFiles;
  private readonly metrics: WatchMetrics;
  private readonly totals = { filesLoaded: 0, filesFailed: 0, tripsLoaded: 0 };
  private readonly wake: Wakeup;
  private readonly watcher: ReturnType<typeof watchFolder>;
  // the served pack's layers, parsed once rather than at every batch's publish
  private readonly heldLayers = new HeldLayers();
  /** When the last batch ended (ms since the epoch): the rest counts from there. */
  private restFrom = 0;
  /** When a batch last looked at every route file (ms since the epoch). */
  private routesUpkeptAt: number | null = null;
  private failures = 0;
  private metricsWrittenAt = 0;
  private held: Warehouse | null = null;
  /** What the warehouse had ranked against of other cells' score counts when last held (src/cells/rank.ts). */
  private readonly rankedSeen: RankedSeen = { seq: 0 };
  /** Whether the published files may have upkeep left (after a batch, until a step finds none). */
  private compactPending = false;
  private n = 1;
  private batchStarted = 0;
  private stopGivingWay: () => void = () => undefined;
  private state: StateDb | null = null;
  private accepted: AcceptedUploads | null = null;
  /** Whether a batch runs without waiting: the first runs whatever is there, finishing what a killed watch or load left behind. */
  due = true;

  private constructor(private readonly options: WatchOptions) {
    this.progress = options.progress ?? silent;
    this.paths = pathsFor(options.dataDir);
    this.pollMs = options.pollMs ?? 1000;
    this.gatherMs = options.gatherMs ?? 100;
    this.busyPace = options.busyPace ?? DEFAULT_BUSY_PACE;
    this.maxRestMs = options.maxRestMs ?? DEFAULT_MAX_REST_MS;
    this.quietMs = options.quietMs ?? setting('DRIVING_LANDING_QUIET_MS');
    this.waiting = new WaitingFiles(this.paths.landingDir);
    mkdirSync(this.paths.landingDir, { recursive: true });
    yieldCpu(this.progress);
    this.metrics = new WatchMetrics(new Date(this.started), outputWriteErrors);
    this.wake = new Wakeup(options.signal);
    this.watcher = watchFolder(this.paths.landingDir, () => this.wake.fire());
  }

  static async start(options: WatchOptions): Promise<ContinuousLoad> {
    const watch = new ContinuousLoad(options);
    watch.state = await openState({ dataDir: options.dataDir });
    // uploads any API machine committed in PostgreSQL wake the watch as well (src/intake/)
    watch.accepted = await AcceptedUploads.start(() => watch.wake.fire(), watch.progress);
    // a job waiting for the warehouse waits while a batch lasts, not only its own limit: it gets the
    // warehouse between batches, and a large partner file goes a slice a batch
    watch.stopGivingWay = announceGivingWay(watch.paths.warehouseFile);
    watch.progress(
      `load: watching ${watch.paths.landingDir} (and the deletion requests); a batch loads and publishes what has arrived, then the watch rests up to ${watch.maxRestMs / 1000} s (all of it at ${watch.busyPace} files/s or more, less in proportion below)`,
    );
    return watch;
  }

  get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  /**
   * One poll while nothing is due: the heartbeat an alert watches, the warehouse let go to a job
   * waiting for it, one step of the published files' upkeep; then whether a batch is due (files,
   * uploads in PostgreSQL, a deletion, another cell's counts), after a moment for the rest of a
   * burst. A link, or a partner file still within its quiet period, makes no batch.
   */
  async idleUntilDue(): Promise<boolean> {
    const { paths, options, progress } = this;
    await this.wake.wait(this.pollMs);
    if (this.stopped) return false;
    if (options.metricsDir && Date.now() - this.metricsWrittenAt >= HEARTBEAT_MS) {
      this.metricsWrittenAt = Date.now();
      await writeMetricsFile(options.metricsDir, this.metrics, progress);
    }
    if (this.held && processesWaitingFor(paths.warehouseFile).length > 0) this.held = release(this.held);
    // a merge a poll, until nothing is left (src/compact/step.ts)
    if (this.held && this.compactPending) this.compactPending = await compactIdle(this.held.conn, paths, progress);
    this.due =
      landingReady(paths.landingDir, this.quietMs) ||
      takenChanged(paths.landingDir) ||
      hasBatchedLeftovers(paths.landingDir) ||
      (await this.accepted?.any()) === true ||
      (await pendingDeletions(this.state as StateDb, currentCell())).length > 0 ||
      // drivers moved to another cell, served there long enough to be erased here (src/cells/move-leave.ts)
      (await leavingDue(this.state as StateDb)) ||
      // another cell posted score counts: this cell's percentiles are ranked again (src/cells/rank.ts)
      (await peersPosted(this.held, this.state as StateDb, this.rankedSeen));
    // idle: one bounded merge of the landing archive's day files (src/load/archive-compact.ts)
    if (!this.due && this.held) await compactArchiveStep(this.held.conn, paths.landingDir, new Date(), { progress });
    if (!this.due) return false;
    await this.wake.sleep(this.gatherMs);
    return true;
  }

  /**
   * The rest after a batch: files that come meanwhile join the next batch, and a job waiting for
   * the warehouse gets it. Its end is the whole `maxRestMs` at the busy pace, in proportion below
   * it; the pace counts the files waiting, so a rest that began quiet grows with a burst arriving
   * meanwhile (the burst loads as one batch, not as a run of growing ones), and with nothing
   * arriving the pace falls as time passes and the rest shortens.
   */
  async rest(): Promise<void> {
    let arrivals: number[] = [];
    for (let lookedAt = 0; !this.stopped; ) {
      const now = Date.now();
      if (now - lookedAt >= REST_LOOK_MS) {
        lookedAt = now;
        if (this.held && processesWaitingFor(this.paths.warehouseFile).length > 0) this.held = release(this.held);
        arrivals = [...this.waiting.read().values()];
      }
      const until =
        this.busyPace <= 0
          ? this.restFrom + this.maxRestMs
          : this.restFrom + this.maxRestMs * Math.min(1, this.pace.perSecond(now, arrivals) / this.busyPace);
      if (until <= now) break;
      await this.wake.sleep(Math.min(REST_TICK_MS, until - now));
    }
  }

  /** Waits while another process waits for the warehouse, so that it gets it before this process takes it again. */
  async giveWayIfAsked(): Promise<void> {
    if (processesWaitingFor(this.paths.warehouseFile).length === 0) return;
    this.held = release(this.held);
    await giveWay(this.paths.warehouseFile, this.progress, this.options.signal);
  }

  /**
   * One batch: the plain load on what has arrived, with the warehouse held between batches (no
   * open, no replay of its log each time); a failure is reported and counted, never thrown.
   */
  async batch(): Promise<BatchOutcome> {
    const { paths, options, progress } = this;
    // taken in before the listing, so that their lag and pace count as the landing files' do
    if (this.accepted) await this.accepted.takeIn(paths.landingDir);
    const arrived = waitingFiles(paths.landingDir);
    this.batchStarted = Date.now();
    const outcome: BatchOutcome = { n: this.n, seconds: 0, lags: [] };
    try {
      const lines: string[] = [];
      let servedAt: number | null = null;
      // waiting for another job's turn is what the watch does: no giving up, one DuckDB thread
      this.held ??= await openWarehouse(paths.warehouseFile, await appsOf(options.dataDir), {
        memoryLimit: jobSettings().memoryLimit,
        lockWaitMs: 24 * 3600_000,
        threads: duckdbThreads() ?? 1,
      });
      // every route file within retention is looked at by the first batch and once a day; the
      // batches between look after their own and the reported ones (src/publish/route-step.ts)
      const fullRoutes = this.routesUpkeptAt === null || Date.now() - this.routesUpkeptAt >= FULL_ROUTE_UPKEEP_MS;
      const result = await runLoad({
        warehouse: this.held,
        routesIncremental: !fullRoutes,
        dataDir: options.dataDir,
        progress: options.verbose ? progress : (line) => lines.push(line),
        // the API shares the machine: a small batch gains little from a second lane, and the
        // retired slot is written by the next batch anyway
        concurrency: 1,
        settleRetired: false,
        heldLayers: this.heldLayers,
        // one slice of a large partner file a batch, with every upload waiting (src/load/slices.ts)
        maxSlices: 1,
        planSlicesAside: true,
        onPublished: () => (servedAt = Date.now()),
        compactMerges: 1,
        quietMs: this.quietMs,
      });
      outcome.result = result;
      if (fullRoutes) this.routesUpkeptAt = this.batchStarted;
      servedAt ??= Date.now();
      // the purge's erasure wrote the warehouse file anew: the next batch opens that one
      if (result.erasure.warehouse) this.held = release(this.held);
      for (const [file, arrivedAt] of arrived) {
        if (existsSync(join(paths.landingDir, file))) continue;
        outcome.lags.push(Math.max(0, (servedAt - arrivedAt) / 1000));
        this.pace.add(arrivedAt);
      }
      this.compactPending = true;
      this.failures = 0;
      const t = result.totals;
      this.totals.filesLoaded += t.files - t.filesSkipped - t.filesFailed;
      this.totals.filesFailed += t.filesFailed;
      this.totals.tripsLoaded += t.tripsLoaded;
      if (!options.verbose) for (const line of lines) if (/FAILED|failed/.test(line)) progress(line);
      const { retaken, vanished, renamed } = result.intake;
      if (t.files > 0 || result.publish.published || result.purged.users > 0 || retaken + vanished + renamed > 0)
        progress(`load: batch ${this.n}: ${loadSummary(result).split('\n')[0]}`);
    } catch (error) {
      // whatever failed, the next try starts from a fresh open
      this.held = release(this.held);
      outcome.error = firstLine(error, Number.POSITIVE_INFINITY);
      this.failures++;
      progress(
        `load: batch ${this.n} failed (exit ${exitCodeOf(error)}): ${outcome.error}; trying again in ${Math.round(this.backoffMs() / 1000)} s`,
      );
    }
    outcome.seconds = (Date.now() - this.batchStarted) / 1000;
    return outcome;
  }

  /**
   * After a batch: its metrics; then, after a failure, a back-off (doubled per failure, up to a
   * minute) before the next try; else what arrived during the batch is the next batch's, after the
   * rest: the busier the stream, the longer (a trickle is loaded at once, a burst in batches of
   * the whole rest's arrivals, the fewest its lag allows).
   */
  async afterBatch(outcome: BatchOutcome): Promise<void> {
    const { paths, options, progress } = this;
    this.metrics.batchEnded(
      outcome.error === undefined,
      outcome.lags,
      outcome.seconds,
      landingStatus(paths.landingDir),
    );
    if (options.metricsDir) {
      this.metricsWrittenAt = Date.now();
      await writeMetrics(options.metricsDir, this.metrics, outcome, this.batchStarted, progress);
    }
    options.onBatch?.(outcome);
    this.n++;
    if (outcome.error !== undefined) {
      await this.wake.sleep(this.backoffMs());
      this.due = true;
    } else {
      this.due = landingReady(paths.landingDir, this.quietMs) || takenChanged(paths.landingDir);
      this.restFrom = Date.now();
    }
  }

  async close(): Promise<void> {
    this.stopGivingWay();
    release(this.held);
    this.heldLayers.releaseAll();
    this.watcher?.close();
    this.wake.close();
    await this.accepted?.close();
  }

  async result(): Promise<WatchResult> {
    const batches = this.metrics.batchCounts;
    return {
      batches: batches.ok + batches.failed,
      failedBatches: batches.failed,
      ...this.totals,
      lagP50Seconds: await this.metrics.lagQuantile(0.5),
      lagP99Seconds: await this.metrics.lagQuantile(0.99),
      seconds: (Date.now() - this.started) / 1000,
    };
  }

  private backoffMs(): number {
    return Math.min(60_000, (this.options.retryAfterMs ?? 5000) * 2 ** Math.max(0, this.failures - 1));
  }
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

/** Whether another cell posted score counts this cell's warehouse has not ranked against (false without cells, or when the store does not answer); `seen`: what it had ranked when last held. */
async function peersPosted(held: Warehouse | null, state: StateDb, seen: RankedSeen): Promise<boolean> {
  const cell = currentCell();
  if (!cell) return false;
  return rankPending(held, state, cell, seen).catch(() => false);
}
