import type { WatchMetrics } from '../metrics/watch-textfile.js';
import { writeJobMetrics } from '../metrics/textfile.js';
import { firstLine } from '../errors.js';
import type { Progress } from '../progress.js';
import { loadRecords } from './metrics.js';
import type { LoadResult } from './load-types.js';

/** One batch of the continuous load, as its metrics and its `onBatch` listeners see it. */
export interface BatchOutcome {
  n: number;
  seconds: number;
  result?: LoadResult;
  error?: string;
  /** Lags observed by this batch: seconds from each landing file's arrival to its publish. */
  lags: number[];
}

/** The watch's metrics file alone, between batches. */
export async function writeMetricsFile(dir: string, metrics: WatchMetrics, progress: Progress): Promise<void> {
  try {
    await metrics.write(dir);
  } catch (error) {
    progress(`load: metrics not written: ${firstLine(error)}`);
  }
}

/** The batch's own metrics file (as a plain load's: the "late" alerts count from it) and the watch's. */
export async function writeMetrics(
  dir: string,
  metrics: WatchMetrics,
  outcome: BatchOutcome,
  startedAt: number,
  progress: Progress,
): Promise<void> {
  await writeMetricsFile(dir, metrics, progress);
  try {
    const exitCode = outcome.error !== undefined ? 1 : outcome.result && outcome.result.totals.filesFailed > 0 ? 2 : 0;
    void writeJobMetrics(dir, 'load', {
      startedAt: new Date(startedAt),
      seconds: outcome.seconds,
      exitCode,
      ...(outcome.result ? loadRecords(outcome.result) : {}),
    }).catch(() => undefined);
  } catch (error) {
    progress(`load: metrics not written: ${firstLine(error)}`);
  }
}
