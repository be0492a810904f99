import { join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';

/** Upload-to-served lag buckets in seconds: the target is a few seconds, a backlog shows as minutes. */
export const LAG_BUCKETS = [0.5, 1, 2, 3, 5, 8, 10, 15, 20, 30, 60, 120, 300, 900];

/** A cumulative histogram, as Prometheus keeps one: counts per upper bound, a sum and a count. */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly buckets: number[]) {
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++)
      if (value <= (this.buckets[i] as number)) this.counts[i] = (this.counts[i] as number) + 1;
  }

  /** The value below which `q` of the observations fall, by linear interpolation in the bucket (as PromQL's histogram_quantile). */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = q * this.count;
    let below = 0;
    let lower = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const upper = this.buckets[i] as number;
      const n = this.counts[i] as number;
      if (n >= rank) return lower + ((upper - lower) * (rank - below)) / Math.max(1, n - below);
      below = n;
      lower = upper;
    }
    return Number.POSITIVE_INFINITY;
  }
}

/** What the continuous load has done since it started, for its metrics file. */
export interface WatchMetrics {
  startedAt: Date;
  lag: Histogram;
  batches: { ok: number; failed: number };
  lastBatchAt: Date | null;
  lastBatchSeconds: number | null;
  backlog: { waiting: number; oldestWaitingSeconds: number | null };
  /** Writes to its own stdout or stderr that failed (a log on a full disk): it went on without them. */
  logWriteErrors?: number;
}

/** `<dir>/driving_load_watch.prom`, beside the jobs' own files (src/metrics/textfile.ts). */
export const watchMetricsFile = (dir: string): string => join(dir, 'driving_load_watch.prom');

/**
 * Writes the continuous load's series where node exporter's textfile collector reads them,
 * atomically, after every batch (docs/operating.md lists them). Readable by all: the collector
 * runs as another user.
 */
export function writeWatchMetrics(dir: string, m: WatchMetrics): string {
  const lines: string[] = [];
  const family = (name: string, type: string, help: string) =>
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  family(
    'driving_load_lag_seconds',
    'histogram',
    "Seconds from a landing file's arrival (an SDK upload accepted, a partner file written) to the publish that serves it",
  );
  m.lag.buckets.forEach((le, i) => lines.push(`driving_load_lag_seconds_bucket{le="${le}"} ${m.lag.counts[i]}`));
  lines.push(
    `driving_load_lag_seconds_bucket{le="+Inf"} ${m.lag.count}`,
    `driving_load_lag_seconds_sum ${m.lag.sum}`,
    `driving_load_lag_seconds_count ${m.lag.count}`,
  );
  family(
    'driving_load_batches_total',
    'counter',
    'Batches the continuous load ran since it started, by outcome (ok, failed)',
  );
  lines.push(
    `driving_load_batches_total{outcome="ok"} ${m.batches.ok}`,
    `driving_load_batches_total{outcome="failed"} ${m.batches.failed}`,
  );
  family('driving_load_watch_start_timestamp_seconds', 'gauge', 'When the continuous load started (Unix time)');
  lines.push(`driving_load_watch_start_timestamp_seconds ${m.startedAt.getTime() / 1000}`);
  family(
    'driving_load_watch_heartbeat_timestamp_seconds',
    'gauge',
    'When the continuous load last looked at the landing area (Unix time): it is alive and not stuck',
  );
  lines.push(`driving_load_watch_heartbeat_timestamp_seconds ${Date.now() / 1000}`);
  if (m.lastBatchAt) {
    family(
      'driving_load_last_batch_timestamp_seconds',
      'gauge',
      "When the continuous load's last batch ended (Unix time)",
    );
    lines.push(`driving_load_last_batch_timestamp_seconds ${m.lastBatchAt.getTime() / 1000}`);
    family('driving_load_last_batch_duration_seconds', 'gauge', "How long the continuous load's last batch took");
    lines.push(`driving_load_last_batch_duration_seconds ${m.lastBatchSeconds ?? 0}`);
  }
  family(
    'driving_load_backlog_files',
    'gauge',
    'Landing files waiting for the continuous load when its last batch ended',
  );
  lines.push(`driving_load_backlog_files ${m.backlog.waiting}`);
  family(
    'driving_load_backlog_oldest_seconds',
    'gauge',
    'Age of the oldest landing file waiting when the last batch ended (0 when none waits)',
  );
  lines.push(`driving_load_backlog_oldest_seconds ${m.backlog.oldestWaitingSeconds ?? 0}`);
  family(
    'driving_load_log_write_errors_total',
    'counter',
    'Lines the continuous load could not write to its stdout or stderr (a log on a full disk) and went on without',
  );
  lines.push(`driving_load_log_write_errors_total ${m.logWriteErrors ?? 0}`);
  const file = watchMetricsFile(dir);
  writeFileAtomic(file, `${lines.join('\n')}\n`, 0o644);
  return file;
}
