import type { Progress } from '../progress.js';
import type { BatchOutcome } from './watch-metrics.js';

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
