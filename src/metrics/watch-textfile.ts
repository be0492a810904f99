import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { writeFileAtomic } from '../fsutil.js';

/** Upload-to-served lag buckets in seconds: the target is a few seconds, a backlog shows as minutes. */
export const LAG_BUCKETS = [0.5, 1, 2, 3, 5, 8, 10, 15, 20, 30, 60, 120, 300, 900];

/** `<dir>/driving_load_watch.prom`, beside the jobs' own files (src/metrics/textfile.ts). */
export const watchMetricsFile = (dir: string): string => join(dir, 'driving_load_watch.prom');

/** The landing files waiting when a batch ended. */
export interface Backlog {
  waiting: number;
  oldestWaitingSeconds: number | null;
}

/**
 * What the continuous load has done since it started (docs/operating.md lists the series), kept in
 * a prom-client registry of its own and written as node exporter's textfile collector reads it.
 * Unlike a batch job's file (src/metrics/textfile.ts, written by hand to spare each short job
 * prom-client's start), the watch starts once and lives for days: the library's format and
 * histogram are worth their load.
 */
export class WatchMetrics {
  private readonly registry = new Registry();
  private readonly lag: Histogram;
  private readonly batches: Counter<'outcome'>;
  private readonly heartbeat: Gauge;
  private readonly lastBatchAt: Gauge;
  private readonly lastBatchSeconds: Gauge;
  private readonly backlogFiles: Gauge;
  private readonly backlogOldest: Gauge;
  private readonly counted = { ok: 0, failed: 0 };

  /** `logWriteErrors`: lines the process could not write to its stdout or stderr so far. */
  constructor(startedAt: Date, logWriteErrors: () => number = () => 0) {
    const registers = [this.registry];
    this.lag = new Histogram({
      name: 'driving_load_lag_seconds',
      help: "Seconds from a landing file's arrival (an SDK upload accepted, a partner file written) to the publish that serves it",
      buckets: LAG_BUCKETS,
      registers,
    });
    this.batches = new Counter({
      name: 'driving_load_batches_total',
      help: 'Batches the continuous load ran since it started, by outcome (ok, failed)',
      labelNames: ['outcome'],
      registers,
    });
    // both outcomes from the start: a rate over a series that appears late misses its first batch
    this.batches.inc({ outcome: 'ok' }, 0);
    this.batches.inc({ outcome: 'failed' }, 0);
    new Gauge({
      name: 'driving_load_watch_start_timestamp_seconds',
      help: 'When the continuous load started (Unix time)',
      registers,
    }).set(startedAt.getTime() / 1000);
    this.heartbeat = new Gauge({
      name: 'driving_load_watch_heartbeat_timestamp_seconds',
      help: 'When the continuous load last looked at the landing area (Unix time): it is alive and not stuck',
      registers,
    });
    // registered at the first batch's end: absent until then, where a 0 would read as 1970
    this.lastBatchAt = new Gauge({
      name: 'driving_load_last_batch_timestamp_seconds',
      help: "When the continuous load's last batch ended (Unix time)",
      registers: [],
    });
    this.lastBatchSeconds = new Gauge({
      name: 'driving_load_last_batch_duration_seconds',
      help: "How long the continuous load's last batch took",
      registers: [],
    });
    this.backlogFiles = new Gauge({
      name: 'driving_load_backlog_files',
      help: 'Landing files waiting for the continuous load when its last batch ended',
      registers,
    });
    this.backlogOldest = new Gauge({
      name: 'driving_load_backlog_oldest_seconds',
      help: 'Age of the oldest landing file waiting when the last batch ended (0 when none waits)',
      registers,
    });
    let seen = 0;
    new Counter({
      name: 'driving_load_log_write_errors_total',
      help: 'Lines the continuous load could not write to its stdout or stderr (a log on a full disk) and went on without',
      registers,
      collect() {
        const now = logWriteErrors();
        if (now > seen) this.inc(now - seen);
        seen = now;
      },
    });
  }

  /** A batch ended: its outcome, the lags of the files it served, and what waits after it. */
  batchEnded(ok: boolean, lags: number[], seconds: number, backlog: Backlog, endedAt = new Date()): void {
    for (const lag of lags) this.lag.observe(lag);
    this.batches.inc({ outcome: ok ? 'ok' : 'failed' });
    this.counted[ok ? 'ok' : 'failed']++;
    if (this.registry.getSingleMetric('driving_load_last_batch_timestamp_seconds') === undefined) {
      this.registry.registerMetric(this.lastBatchAt);
      this.registry.registerMetric(this.lastBatchSeconds);
    }
    this.lastBatchAt.set(endedAt.getTime() / 1000);
    this.lastBatchSeconds.set(seconds);
    this.backlogFiles.set(backlog.waiting);
    this.backlogOldest.set(backlog.oldestWaitingSeconds ?? 0);
  }

  /** Batches ended so far, by outcome. */
  get batchCounts(): { ok: number; failed: number } {
    return { ...this.counted };
  }

  /** The lag below which `q` of the files fell, from the histogram's buckets (as PromQL's histogram_quantile); null before any. */
  async lagQuantile(q: number): Promise<number | null> {
    const { values } = await this.lag.get();
    const bucket = (le: number | string) =>
      values.find((v) => v.metricName === 'driving_load_lag_seconds_bucket' && v.labels['le'] === le)?.value ?? 0;
    return quantileOf(
      LAG_BUCKETS,
      LAG_BUCKETS.map((le) => bucket(le)),
      bucket('+Inf'),
      q,
    );
  }

  /**
   * Writes the series where node exporter's textfile collector reads them, atomically (the
   * collector never reads half a file), readable by all: the collector runs as another user.
   */
  async write(dir: string): Promise<string> {
    this.heartbeat.set(Date.now() / 1000);
    const text = await this.registry.metrics();
    const file = watchMetricsFile(dir);
    writeFileAtomic(file, text, 0o644);
    return file;
  }
}

/** The value below which `q` of `count` observations fall, by linear interpolation in the bucket (cumulative `counts`). */
export function quantileOf(buckets: number[], counts: number[], count: number, q: number): number | null {
  if (count === 0) return null;
  const rank = q * count;
  let below = 0;
  let lower = 0;
  for (let i = 0; i < buckets.length; i++) {
    const upper = buckets[i] as number;
    const n = counts[i] as number;
    if (n >= rank) return lower + ((upper - lower) * (rank - below)) / Math.max(1, n - below);
    below = n;
    lower = upper;
  }
  return Number.POSITIVE_INFINITY;
}
